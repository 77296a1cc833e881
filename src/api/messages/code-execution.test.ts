// The code_execution server tool on the messages surface, on the real bubblewrap sandbox
// through the registry's container tools. code_execution_20250522: a fenced Python block
// runs as written and its output comes back as a code_execution_tool_result; the answer
// names its container, which a later request reuses by `container`. The later versions
// (20250825 and the dated ones the SDKs type after it), with both SDK generations: the
// model's bash_code_execution and text_editor_code_execution calls run in one container,
// their results in the vendor's blocks, accepted back in later turns. The Code
// interpreter switch is needed; unknown versions and the vendor's skills are refused.
// Needs root and bubblewrap (CI).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import Anthropic0 from 'anthropic-sdk-0';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let server: TestServer;
let client: Anthropic;
before(async () => {
  if (skip) return;
  server = await startTestServer({ AGENT_API_SANDBOX_TIMEOUT_MS: '8000' });
  const { key } = await server.createKey({ permissions: { function_calling: true, code_interpreter: true } });
  client = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(() => server?.close());

type Block = { type: string; [k: string]: any };
const tool = { type: 'code_execution_20250522' as const, name: 'code_execution' as const };
const fenced = (code: string) => `Run this:\n\n\`\`\`python\n${code}\n\`\`\`\n`;

describe('code_execution', { skip }, () => {
  test('a program runs in the sandbox; its output is the tool result; the container is named and reused', async () => {
    const m = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [tool], messages: [{ role: 'user', content: fenced("open('/mnt/data/n.txt','w').write('41')\nprint(6 * 7)") }] });
    const blocks = m.content as Block[];
    const use = blocks.find((b) => b.type === 'server_tool_use')!;
    assert.equal(use.name, 'code_execution');
    assert.match(use.input.code, /print\(6 \* 7\)/);
    const result = blocks.find((b) => b.type === 'code_execution_tool_result')!;
    assert.equal(result.tool_use_id, use.id);
    assert.equal(result.content.type, 'code_execution_result');
    assert.equal(result.content.stdout.trim(), '42');
    assert.equal(result.content.return_code, 0);
    const container = (m as unknown as { container: { id: string; expires_at: string } }).container;
    assert.match(container.id, /^cntr_/);
    assert.ok(Date.parse(container.expires_at) > Date.now());
    // The same container again: the file written before is there.
    const again = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [tool], container: container.id, messages: [{ role: 'user', content: fenced("print(open('/mnt/data/n.txt').read())") }] } as never);
    const second = (again.content as Block[]).find((b) => b.type === 'code_execution_tool_result')!;
    assert.equal(second.content.stdout.trim(), '41');
  });

  test('the Code interpreter switch is needed; unknown versions and skills are refused', async () => {
    const { key } = await server.createKey({ permissions: { function_calling: true } });
    const without = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await assert.rejects(without.messages.create({ model: 'agent', max_tokens: 50, tools: [tool], messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => (e as { status?: number }).status === 403);
    await assert.rejects(
      without.messages.create({ model: 'agent', max_tokens: 50, tools: [{ type: 'code_execution_20250825', name: 'code_execution' }], messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => (e as { status?: number }).status === 403,
    );
    await assert.rejects(
      client.messages.create({ model: 'agent', max_tokens: 50, tools: [{ type: 'code_execution_20240101', name: 'code_execution' } as never], messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => (e as { status?: number }).status === 400 && /tools\[0\]\.type/.test((e as Error).message),
    );
    await assert.rejects(
      client.messages.create({ model: 'agent', max_tokens: 50, tools: [tool], container: { skills: [{ type: 'anthropic', skill_id: 'pptx' }] }, messages: [{ role: 'user', content: 'hi' }] } as never),
      (e: unknown) => (e as { status?: number }).status === 400 && /container\.skills/.test((e as Error).message),
    );
  });
});

const generations: [string, (apiKey: string) => Anthropic][] = [
  ['@anthropic-ai/sdk 1.x', (apiKey) => new Anthropic({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 })],
  ['@anthropic-ai/sdk 0.x', (apiKey) => new Anthropic0({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 }) as unknown as Anthropic],
];

for (const [generation, make] of generations) {
  describe(`code_execution_20250825 with ${generation}`, { skip }, () => {
    let sdk: Anthropic;
    before(async () => {
      if (skip) return;
      sdk = make((await server.createKey({ permissions: { function_calling: true, code_interpreter: true } })).key);
    });
    const tool = { type: 'code_execution_20250825' as const, name: 'code_execution' as const };
    const run = async (content: string, container?: string, tools: unknown[] = [tool]) => {
      const m = await sdk.messages.create({ model: 'agent', max_tokens: 500, tools: tools as never, ...(container ? { container } : {}), messages: [{ role: 'user', content }] });
      const blocks = m.content as Block[];
      const use = blocks.find((b) => b.type === 'server_tool_use')!;
      assert.ok(use, JSON.stringify(blocks));
      const result = blocks.find((b) => b.type.endsWith('_tool_result'))!;
      assert.equal(result.tool_use_id, use.id);
      return { m, use, result, container: (m as unknown as { container: { id: string } }).container.id };
    };

    test('the text editor creates, edits and views a file that bash then reads, in one container', async () => {
      const created = await run("Create a file notes.txt containing 'hello world'");
      assert.equal(created.use.name, 'text_editor_code_execution');
      assert.deepEqual(created.use.input, { command: 'create', path: 'notes.txt', file_text: 'hello world' });
      assert.equal(created.result.type, 'text_editor_code_execution_tool_result');
      assert.deepEqual(created.result.content, { type: 'text_editor_code_execution_create_result', is_file_update: false });
      assert.match(created.container, /^cntr_/);

      const bash = await run('Run `cat notes.txt; echo; exit 3`', created.container);
      assert.equal(bash.use.name, 'bash_code_execution');
      assert.deepEqual(bash.use.input, { command: 'cat notes.txt; echo; exit 3' });
      assert.equal(bash.result.type, 'bash_code_execution_tool_result');
      assert.deepEqual(bash.result.content, { type: 'bash_code_execution_result', stdout: 'hello world\n', stderr: '', return_code: 3, content: [] });
      assert.equal(bash.container, created.container);

      const replaced = await run("Replace 'world' with 'there' in notes.txt", created.container);
      assert.deepEqual(replaced.use.input, { command: 'str_replace', path: 'notes.txt', old_str: 'world', new_str: 'there' });
      assert.deepEqual(replaced.result.content, { type: 'text_editor_code_execution_str_replace_result', lines: ['-world', '+there'], old_start: 1, old_lines: 1, new_start: 1, new_lines: 1 });

      const viewed = await run('View the file notes.txt', created.container);
      assert.deepEqual(viewed.use.input, { command: 'view', path: 'notes.txt' });
      assert.deepEqual(viewed.result.content, { type: 'text_editor_code_execution_view_result', file_type: 'text', content: 'hello there', num_lines: 1, start_line: 1, total_lines: 1 });

      const missing = await run('View the file absent.txt', created.container);
      assert.equal(missing.result.content.type, 'text_editor_code_execution_tool_result_error');
      assert.equal(missing.result.content.error_code, 'file_not_found');
      assert.equal(typeof missing.result.content.error_message, 'string');

      // Sent back whole in a later turn, every block is accepted.
      const next = await sdk.messages.create({
        model: 'agent',
        max_tokens: 200,
        tools: [tool],
        container: created.container,
        messages: [
          { role: 'user', content: 'Run `cat notes.txt; echo; exit 3`' },
          { role: 'assistant', content: [...(bash.m.content as never[]), ...(replaced.m.content as never[]), ...(viewed.m.content as never[])] },
          { role: 'user', content: 'Thanks. Say it in one word.' },
        ],
      } as never);
      assert.equal(next.stop_reason, 'end_turn');
    });

    test('files a command writes stay in the container; python fenced runs through bash; the streamed blocks', async () => {
      // A file a command writes stays in the container (a container file, not one of the Files API): no output blocks name it.
      const wrote = await run('Run `printf 42 > answer.txt`');
      assert.deepEqual(wrote.result.content, { type: 'bash_code_execution_result', stdout: '', stderr: '', return_code: 0, content: [] });
      const read = await run('Run `cat answer.txt`', wrote.container);
      assert.equal(read.result.content.stdout, '42');

      const py = await run(fenced('print(6 * 7)'));
      assert.equal(py.use.name, 'bash_code_execution');
      assert.match(py.use.input.command, /python3/);
      assert.equal(py.result.content.stdout, '42\n');

      const params = { model: 'agent', max_tokens: 500, tools: [tool], messages: [{ role: 'user' as const, content: 'Run `echo streamed`' }] };
      const starts: string[] = [];
      const stream = sdk.messages.stream(params);
      stream.on('streamEvent', (e) => {
        if (e.type === 'content_block_start') starts.push(e.content_block.type);
      });
      const final = await stream.finalMessage();
      assert.deepEqual(starts.slice(0, 2), ['server_tool_use', 'bash_code_execution_tool_result']);
      const result = (final.content as Block[]).find((b) => b.type === 'bash_code_execution_tool_result')!;
      assert.equal(result.content.stdout, 'streamed\n');
      assert.match((final as unknown as { container: { id: string } }).container.id, /^cntr_/);
    });

    test('the later dated versions run the same tools', async () => {
      for (const type of ['code_execution_20260120', 'code_execution_20260521']) {
        const ran = await run('Run `echo dated`', undefined, [{ type, name: 'code_execution' }]);
        assert.equal(ran.use.name, 'bash_code_execution');
        assert.equal(ran.result.content.stdout, 'dated\n');
      }
    });
  });
}

test('no sandbox on the host: every code execution version is refused saying why, before anything runs', async () => {
  // The real sandbox, somewhere it cannot make its directories.
  const bare = await startTestServer({ AGENT_API_SANDBOX_DIR: '/dev/null/agent-api-containers' });
  try {
    const { key } = await bare.createKey({ permissions: { function_calling: true, code_interpreter: true } });
    const sdk = new Anthropic0({ apiKey: key, baseURL: `${bare.origin}/api/messages`, maxRetries: 0 });
    for (const type of ['code_execution_20250522', 'code_execution_20250825']) {
      await assert.rejects(sdk.messages.create({ model: 'agent', max_tokens: 50, tools: [{ type, name: 'code_execution' } as never], messages: [{ role: 'user', content: 'Run `echo hi`' }] }), (e: unknown) => {
        assert.equal((e as { status?: number }).status, 529, String(e));
        assert.match((e as Error).message, /Code execution is not available/);
        return true;
      });
    }
  } finally {
    await bare.close();
  }
});
