// The output builder's hosted container items, part by part: a code run's events in the
// reference's order with its logs shown only when included; a shell call cut short still
// gets its (incomplete) output item; links to written files become container citations
// at code-point offsets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StreamPart } from '../../providers/types.ts';
import type { WrittenFile } from '../../tools/containers/container-tool.ts';
import { containerCitations } from './container-citations.ts';
import type { CodeInterpreterData } from '../../tools/containers/code-interpreter-tool.ts';
import { OutputBuilder, type StreamEvent } from './output-builder.ts';
import type { ToolKind } from './tool-mapping.ts';

const kinds = new Map<string, ToolKind>([
  ['code_interpreter', { kind: 'code_interpreter', containerId: 'cntr_a' }],
  ['shell', { kind: 'container_shell', containerId: 'cntr_a' }],
]);

const call = (name: string, args: string): StreamPart[] => [
  { type: 'tool-input-start', id: 'call_1', toolName: name, providerExecuted: true },
  { type: 'tool-input-delta', id: 'call_1', delta: args },
  { type: 'tool-input-end', id: 'call_1' },
];

const file: WrittenFile = { file_id: 'cfile_1', container_id: 'cntr_a', path: '/mnt/data/out.csv', filename: 'out.csv', bytes: 3 };

function run(builder: OutputBuilder, parts: StreamPart[]): StreamEvent[] {
  return [...parts.flatMap((p) => builder.add(p)), ...builder.close()];
}

test('a code run: added, in_progress, code deltas and done, interpreting, completed, done; logs only when included', () => {
  const code = 'x = 1\n' + 'y'.repeat(1200) + '\nprint(x)';
  const data: CodeInterpreterData = { containerId: 'cntr_a', code, status: 'completed', logs: '1\n', files: [file] };
  const parts: StreamPart[] = [
    ...call('code_interpreter', JSON.stringify({ code })),
    { type: 'tool-result', toolCallId: 'call_1', toolName: 'code_interpreter', result: '{}', data },
    { type: 'text-delta', id: 't', delta: 'Wrote [it](sandbox:/mnt/data/out.csv).' },
    { type: 'finish', reason: 'stop' },
  ];
  for (const include of [[], ['code_interpreter_call.outputs']]) {
    const builder = new OutputBuilder(kinds, false, include);
    const events = run(builder, parts);
    const types = events.map((e) => e.type);
    assert.deepEqual(types.slice(0, 2), ['response.output_item.added', 'response.code_interpreter_call.in_progress']);
    const deltas = events.filter((e) => e.type === 'response.code_interpreter_call_code.delta');
    assert.ok(deltas.length >= 3, 'a long line is cut');
    assert.equal(deltas.map((e) => e.delta).join(''), code);
    const rest = types.slice(2 + deltas.length, 2 + deltas.length + 4);
    assert.deepEqual(rest, ['response.code_interpreter_call_code.done', 'response.code_interpreter_call.interpreting', 'response.code_interpreter_call.completed', 'response.output_item.done']);
    const done = events[2 + deltas.length + 3]!.item as Record<string, unknown>;
    assert.equal(done.container_id, 'cntr_a');
    assert.deepEqual(done.outputs, include.length ? [{ type: 'logs', logs: '1\n' }] : null);
    // The stored output keeps the logs whatever was included.
    assert.deepEqual(builder.output[0]!.outputs, [{ type: 'logs', logs: '1\n' }]);
    const message = builder.output[1]!.content as { annotations: unknown[] }[];
    assert.deepEqual(message[0]!.annotations, [{ type: 'container_file_citation', container_id: 'cntr_a', file_id: 'cfile_1', filename: 'out.csv', start_index: 11, end_index: 36 }]);
  }
});

test('a container shell call cut short before it ran: the call done, then an incomplete output with nothing in it', () => {
  const builder = new OutputBuilder(kinds);
  const events = run(builder, call('shell', JSON.stringify({ commands: ['sleep 9', 'echo x'], max_output_length: 100 })));
  assert.deepEqual(
    events.map((e) => e.type),
    [
      'response.output_item.added',
      ...Array.from({ length: 2 }, () => ['response.shell_call_command.added', 'response.shell_call_command.delta', 'response.shell_call_command.done']).flat(),
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
    ],
  );
  const [shellCall, output] = builder.output;
  assert.equal(shellCall!.status, 'completed');
  assert.deepEqual({ ...output, id: 'x' }, { id: 'x', type: 'shell_call_output', call_id: 'call_1', status: 'incomplete', output: [], max_output_length: 100 });
});

test('container citations: code-point offsets, trailing punctuation left out, unknown files and other paths ignored', () => {
  const written = new Map([[file.path, file]]);
  const text = 'Ünïcödé 😀 see sandbox:/mnt/data/out.csv. Not /mnt/data/other.csv, but /mnt/data/out.csv';
  const found = containerCitations(text, written);
  assert.equal(found.length, 2);
  const cp = [...text];
  const slice = (c: { start_index: number; end_index: number }) => cp.slice(c.start_index, c.end_index).join('');
  assert.equal(slice(found[0]!), 'sandbox:/mnt/data/out.csv');
  assert.equal(slice(found[1]!), '/mnt/data/out.csv');
  assert.deepEqual(containerCitations('/mnt/data/' + 'a'.repeat(100_000), written), []);
});
