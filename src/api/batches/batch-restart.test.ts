// A batch survives its server: stopped in the middle (a new process on the same
// database takes over) it completes and every line reaches the model exactly once;
// killed with `kill -9`, the lines cut off are recorded failed and never run again.
// The server runs as a real child process; a fake upstream counts the calls per line.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { freePort, startChildApp } from '../../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../../test/helpers/test-server.ts';

const LINES = 60;

let upstream: FakeUpstream;
/** Upstream calls per line (the line's custom id is its message). */
const calls = new Map<string, number>();

before(async () => {
  upstream = await startFakeUpstream(async (req, res) => {
    const content = String((req.body.messages as { content: string }[])[0]?.content);
    calls.set(content, (calls.get(content) ?? 0) + 1);
    await delay(40);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${content}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
      }),
    );
  });
});
after(() => upstream.close());


function startServer(scratch: { dir: string; url: string }, port: number): Promise<ChildProcess> {
  return startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: 'batch-restart',
    AGENT_API_JOBS_POLL_MS: '50',
    AGENT_API_BATCH_CONCURRENCY: '3',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'up',
    UPSTREAM_PRICE_INPUT_PER_MTOK: '1',
    UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1',
    UPSTREAM_MAX_RETRIES: '0',
  });
}

async function createBatch(origin: string, tag: string) {
  const admin = async (p: string, body: unknown) =>
    (await fetch(`${origin}/admin/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;
  const account = await admin('/accounts', { name: `batch-${tag}-${Date.now()}`, credits: 100 });
  const { key } = await admin('/keys', { account_id: account.id, name: tag, permissions: { files: true } });
  const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0 });
  const lines = Array.from({ length: LINES }, (_, i) => ({ custom_id: `${tag}-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: `${tag}-${i}` }] } }));
  const file = await client.files.create({ file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')), `${tag}.jsonl`), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  return { key, id: batch.id };
}

async function waitFor(client: OpenAI, id: string, done: (b: OpenAI.Batch) => boolean): Promise<OpenAI.Batch> {
  for (let i = 0; i < 1_000; i++) {
    const b = await client.batches.retrieve(id);
    if (done(b)) return b;
    await delay(30);
  }
  throw new Error('the batch did not get there');
}

const linesOf = (tag: string) => [...calls.entries()].filter(([k]) => k.startsWith(`${tag}-`));

for (const [how, signal] of [
  ['a restart (SIGTERM, then a new process)', 'SIGTERM'],
  ['kill -9, then a new process', 'SIGKILL'],
] as const) {
  test(`a batch resumes after ${how} and runs no line twice`, async () => {
    const scratch = await scratchDatabase();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const tag = signal === 'SIGTERM' ? 'term' : 'kill';
    let child = await startServer(scratch, port);
    try {
      const { key, id } = await createBatch(origin, tag);
      const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0 });
      await waitFor(client, id, (b) => (b.request_counts?.completed ?? 0) >= 10);
      child.kill(signal);
      await once(child, 'exit');
      const before = linesOf(tag).length;
      assert.ok(before > 0 && before < LINES, `stopped midway (${before} lines had run)`);

      child = await startServer(scratch, port);
      const batch = await waitFor(client, id, (b) => b.status === 'completed');
      const counts = batch.request_counts!;
      assert.equal(counts.total, LINES);
      assert.equal(counts.completed + counts.failed, LINES);
      // No line reached the model twice.
      const twice = linesOf(tag).filter(([, n]) => n > 1);
      assert.deepEqual(twice, []);
      const out = (await (await client.files.content(batch.output_file_id!)).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l));
      const errors = batch.error_file_id ? (await (await client.files.content(batch.error_file_id)).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
      assert.equal(out.length + errors.length, LINES, 'every line is in one file or the other, once');
      assert.equal(new Set([...out, ...errors].map((o) => o.custom_id)).size, LINES);
      if (signal === 'SIGTERM') {
        // A graceful stop lets the running lines finish: every line ran, exactly once.
        assert.equal(counts.completed, LINES, JSON.stringify(errors.slice(0, 2)));
        assert.equal(linesOf(tag).length, LINES);
      } else {
        // Lines a crash cut off are failed, not run again; all others ran once.
        for (const e of errors) assert.match(e.response.body.error.message, /restarted/);
        assert.equal(linesOf(tag).length, LINES - errors.filter((e) => !calls.has(e.custom_id)).length);
      }
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
      await scratch.cleanup();
    }
  });
}
