// The code_interpreter tool of /v1/responses on the real bubblewrap sandbox, driven by
// the official openai SDK against the offline engine: a question about an uploaded CSV
// answered from the program's real output; a fenced Python block run exactly as written,
// its file cited and downloadable; the same container continued by previous_response_id;
// a named container, another account's, and the switch; the streamed events checked
// against the reference; a background response and a batch line holding a container.
// Needs root and bubblewrap (CI).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream } from './event-checks.test-support.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let server: TestServer;
let client: OpenAI;
let other: OpenAI;
const CSV = 'region,amount\nnorth,12.5\nsouth,30\neast,17.5\nwest,40\n';

before(async () => {
  if (skip) return;
  // A short time limit, so the endless program below ends soon.
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20', AGENT_API_SANDBOX_TIMEOUT_MS: '4000' });
  const permissions = { code_interpreter: true, files: true };
  client = server.openai((await server.createKey({ permissions })).key);
  other = server.openai((await server.createKey({ permissions })).key);
});
after(() => server?.close());

const fenced = (code: string, before = 'Run this:') => `${before}\n\n\`\`\`python\n${code}\n\`\`\`\n`;
const logsOf = (item: any): string => (item.outputs ?? []).map((o: any) => o.logs ?? '').join('');

describe('code_interpreter', { skip }, () => {
  test('a question about an uploaded CSV is answered from the program it ran', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from(CSV), 'sales.csv'), purpose: 'user_data' });
    const r = await client.responses.create({
      model: 'agent',
      input: 'What is the total amount in sales.csv?',
      tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: [file.id] } }],
      include: ['code_interpreter_call.outputs'],
    });
    assert.equal(r.status, 'completed');
    const call = r.output.find((i) => i.type === 'code_interpreter_call') as any;
    assert.ok(call, JSON.stringify(r.output));
    assert.equal(call.status, 'completed');
    assert.match(call.container_id, /^cntr_/);
    assert.match(call.code, /sales\.csv/);
    // The figure is the program's: 12.5 + 30 + 17.5 + 40.
    assert.match(logsOf(call), /\b100\b/);
    assert.match(r.output_text, /\b100\b/);
    // The container is a real one of this account, holding the file.
    const files = await client.containers.files.list(call.container_id);
    assert.ok(files.data.some((f) => f.path === '/mnt/data/sales.csv'));
    await assert.rejects(other.containers.retrieve(call.container_id), (e: any) => e.status === 404);
  });

  test('logs show only with include; a fenced block runs exactly as written', async () => {
    const code = "import sys\nprint('out', 6 * 7)\nprint('err line', file=sys.stderr)";
    const r = await client.responses.create({ model: 'agent', input: fenced(code), tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
    const call = r.output.find((i) => i.type === 'code_interpreter_call') as any;
    assert.equal(call.code, code);
    assert.equal(call.outputs, null);
    assert.match(r.output_text, /out 42/);
    const again = await client.responses.retrieve(r.id, { include: ['code_interpreter_call.outputs'] });
    const kept = again.output.find((i) => i.type === 'code_interpreter_call') as any;
    assert.match(logsOf(kept), /out 42\n/);
    assert.match(logsOf(kept), /err line/);
  });

  test('a file the program writes is cited and downloadable; the next turn continues in the same container', async () => {
    const code = "rows = ['n,square'] + [f'{i},{i * i}' for i in range(1, 6)]\nopen('squares.csv', 'w').write('\\n'.join(rows) + '\\n')\nprint('wrote squares.csv')";
    const r = await client.responses.create({ model: 'agent', input: fenced(code), tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
    const call = r.output.find((i) => i.type === 'code_interpreter_call') as any;
    const message = r.output.find((i) => i.type === 'message') as any;
    const part = message.content[0];
    const citation = part.annotations.find((a: any) => a.type === 'container_file_citation');
    assert.ok(citation, JSON.stringify(part));
    assert.equal(citation.container_id, call.container_id);
    assert.equal(citation.filename, 'squares.csv');
    assert.match(citation.file_id, /^cfile_/);
    // The span names the file (offsets in code points; this text is ASCII).
    assert.match(part.text.slice(citation.start_index, citation.end_index), /\/mnt\/data\/squares\.csv$/);
    const content = await client.containers.files.content.retrieve(citation.file_id, { container_id: citation.container_id });
    assert.equal(await content.text(), 'n,square\n1,1\n2,4\n3,9\n4,16\n5,25\n');
    const meta = await client.containers.files.retrieve(citation.file_id, { container_id: citation.container_id });
    assert.equal(meta.source, 'assistant');

    const next = await client.responses.create({
      model: 'agent',
      previous_response_id: r.id,
      input: fenced("print(open('squares.csv').read().splitlines()[-1])"),
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    const nextCall = next.output.find((i) => i.type === 'code_interpreter_call') as any;
    assert.equal(nextCall.container_id, call.container_id);
    assert.match(next.output_text, /5,25/);

    // A stateless client (store: false, the whole history sent again) continues it too.
    const history = [...(r.output as any[]), { role: 'user', content: fenced("print(len(open('squares.csv').read().splitlines()))") }];
    const stateless = await client.responses.create({ model: 'agent', store: false, input: history as never, tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
    assert.equal((stateless.output.find((i) => i.type === 'code_interpreter_call') as any).container_id, call.container_id);
    assert.match(stateless.output_text, /\b6\b/);
    // An item naming a container id this service never made is not looked up (a new container is made).
    const forged = await client.responses.create({
      model: 'agent',
      input: [{ type: 'code_interpreter_call', id: 'ci_x', status: 'completed', container_id: 'cntr_x\u00a0', code: '', outputs: [] }, { role: 'user', content: fenced('print(1)') }] as never,
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      store: false,
    });
    assert.notEqual((forged.output.find((i) => i.type === 'code_interpreter_call') as any).container_id, 'cntr_x\u00a0');
  });

  test('streamed: the reference events, in order, around a run', async () => {
    const events: any[] = [];
    const stream = await client.responses.create({ model: 'agent', input: fenced('print(sum(range(10)))'), tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], stream: true });
    for await (const e of stream) events.push(e);
    const final = checkStream(events);
    const types = events.map((e) => e.type);
    const at = (t: string) => types.indexOf(t);
    const order = [
      'response.code_interpreter_call.in_progress',
      'response.code_interpreter_call_code.delta',
      'response.code_interpreter_call_code.done',
      'response.code_interpreter_call.interpreting',
      'response.code_interpreter_call.completed',
    ];
    for (const t of order) assert.ok(at(t) >= 0, `${t} missing: ${types.join(' ')}`);
    for (let i = 1; i < order.length; i++) assert.ok(at(order[i - 1]!) < at(order[i]!), `${order[i - 1]} before ${order[i]}`);
    const added = events.find((e) => e.type === 'response.output_item.added' && e.item.type === 'code_interpreter_call');
    assert.ok(added.sequence_number < events[at(order[0]!)].sequence_number);
    const code = events.filter((e) => e.type === 'response.code_interpreter_call_code.delta').map((e) => e.delta).join('');
    assert.equal(code, 'print(sum(range(10)))');
    assert.match(final.output.find((i: any) => i.type === 'message').content[0].text, /45/);

    // Replayed from storage: the same events, checked the same way.
    const replayed: any[] = [];
    for await (const e of await client.responses.retrieve(final.id, { stream: true })) replayed.push(e);
    checkStream(replayed);
    for (const t of order) assert.ok(replayed.some((e) => e.type === t), `${t} missing from the replay`);
  });

  test('a named container: the account\'s runs there; another account\'s or an unknown id is 404; the switch is 403', async () => {
    const c = await client.containers.create({ name: 'named' });
    const r = await client.responses.create({ model: 'agent', input: fenced("open('mark.txt', 'w').write('x'); print('ok')"), tools: [{ type: 'code_interpreter', container: c.id }] });
    assert.equal((r.output.find((i) => i.type === 'code_interpreter_call') as any).container_id, c.id);
    assert.ok((await client.containers.files.list(c.id)).data.some((f) => f.path === '/mnt/data/mark.txt'));
    await assert.rejects(other.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'code_interpreter', container: c.id }] }), (e: any) => e.status === 404 && e.param === 'tools[0].container');
    await assert.rejects(client.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'code_interpreter', container: 'cntr_unknown' }] }), (e: any) => e.status === 404 && e.param === 'tools[0].container');
    await assert.rejects(
      client.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file_nope'] } }] }),
      (e: any) => e.status === 400 && e.param === 'tools[0].container.file_ids[0]',
    );
    await assert.rejects(
      client.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto', memory_limit: '4g' } }] }),
      (e: any) => e.status === 400 && e.param === 'tools[0].container.memory_limit',
    );
    const plain = server.openai((await server.createKey()).key);
    await assert.rejects(plain.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }), (e: any) => e.status === 403 && e.param === 'tools[0].type');
  });

  test('a program stopped at the limit, one that fails, and an endless output are reported, not fatal', async () => {
    const r = await client.responses.create({
      model: 'agent',
      input: fenced("import sys\nprint('x' * 200000)\nsys.exit(3)"),
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      include: ['code_interpreter_call.outputs'],
    });
    const call = r.output.find((i) => i.type === 'code_interpreter_call') as any;
    assert.equal(call.status, 'completed');
    assert.ok(logsOf(call).length <= 70_000, 'output capped');
    assert.match(r.output_text, /\b3\b/);

    const endless = await client.responses.create({ model: 'agent', input: fenced('while True:\n    pass'), tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], include: ['code_interpreter_call.outputs'] });
    const stopped = endless.output.find((i) => i.type === 'code_interpreter_call') as any;
    assert.equal(stopped.status, 'failed');
    assert.match(logsOf(stopped), /time limit/);
    assert.match(endless.output_text, /time limit/i);
  });

  test('a background response and a batch line run code like a live one', async () => {
    const queued = await client.responses.create({ model: 'agent', input: fenced('print(2 ** 20)'), tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], background: true });
    let done = queued;
    for (let i = 0; i < 1500 && ['queued', 'in_progress'].includes(done.status!); i++) {
      await new Promise((r) => setTimeout(r, 20));
      done = await client.responses.retrieve(queued.id);
    }
    assert.equal(done.status, 'completed');
    assert.ok(done.output.some((i) => i.type === 'code_interpreter_call'));
    assert.match(done.output_text, /1048576/);

    const line = { custom_id: 'c-1', method: 'POST', url: '/v1/responses', body: { model: 'agent', input: fenced('print(7 * 191)'), tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] } };
    const input = await client.files.create({ file: await toFile(Buffer.from(JSON.stringify(line) + '\n'), 'b.jsonl'), purpose: 'batch' });
    let batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/responses', completion_window: '24h' });
    for (let i = 0; i < 1500 && !['completed', 'failed', 'cancelled'].includes(batch.status); i++) {
      await new Promise((r) => setTimeout(r, 20));
      batch = await client.batches.retrieve(batch.id);
    }
    assert.equal(batch.status, 'completed', JSON.stringify(batch.errors));
    const out = JSON.parse((await (await client.files.content(batch.output_file_id!)).text()).trim());
    const body = out.response.body;
    assert.ok(body.output.some((i: any) => i.type === 'code_interpreter_call'), JSON.stringify(body.output));
    assert.match(JSON.stringify(body.output), /1337/);
  });
});
