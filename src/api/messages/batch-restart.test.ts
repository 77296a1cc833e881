// A message batch survives `kill -9` of its server as a /v1 batch does (the same job):
// a new process on the same database finishes it, no request reaches the model twice,
// and a request the crash cut off reads back from batches.results() as errored
// (api_error, "restarted"), never run again. A real child process; a fake upstream
// counts the calls per request.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { freePort, startChildApp } from '../../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../../test/helpers/test-server.ts';

const REQUESTS = 60;
let upstream: FakeUpstream;
/** Upstream calls per request (its custom_id is its prompt). */
const calls = new Map<string, number>();

before(async () => {
  upstream = await startFakeUpstream(async (req, res) => {
    const c = (req.body.messages as { content: string | { text?: string }[] }[]).at(-1)?.content;
    const content = typeof c === 'string' ? c : (c ?? []).map((p) => p.text ?? '').join('');
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

const startServer = (scratch: { dir: string; url: string }, port: number): Promise<ChildProcess> =>
  startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: 'message-batch-restart',
    AGENT_API_JOBS_POLL_MS: '50',
    AGENT_API_BATCH_CONCURRENCY: '3',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'up',
    UPSTREAM_PRICE_INPUT_PER_MTOK: '1',
    UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1',
    UPSTREAM_MAX_RETRIES: '0',
  });

test('a message batch resumes after kill -9 and runs no request twice', async () => {
  const scratch = await scratchDatabase();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let child = await startServer(scratch, port);
  try {
    const admin = async (p: string, body: unknown) =>
      (await fetch(`${origin}/admin/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Record<string, any>>;
    const account = await admin('/accounts', { name: `msgbatch-${Date.now()}`, credits: 100 });
    const { key } = await admin('/keys', { account_id: account.id, name: 'k', permissions: { files: true } });
    const client = new Anthropic({ apiKey: key, baseURL: `${origin}/api/messages`, maxRetries: 0 });
    const requests = Array.from({ length: REQUESTS }, (_, i) => ({ custom_id: `m-${i}`, params: { model: 'agent', max_tokens: 50, messages: [{ role: 'user' as const, content: `m-${i}` }] } }));
    const { id } = await client.messages.batches.create({ requests });
    const waitFor = async (done: (b: Anthropic.Messages.MessageBatch) => boolean) => {
      for (let i = 0; i < 1_000; i++) {
        const b = await client.messages.batches.retrieve(id);
        if (done(b)) return b;
        await delay(30);
      }
      throw new Error('the batch did not get there');
    };
    await waitFor((b) => b.request_counts.succeeded >= 10);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const ran = calls.size;
    assert.ok(ran > 0 && ran < REQUESTS, `stopped midway (${ran} had run)`);

    child = await startServer(scratch, port);
    const batch = await waitFor((b) => b.processing_status === 'ended');
    const counts = batch.request_counts;
    assert.equal(counts.succeeded + counts.errored, REQUESTS, JSON.stringify(counts));
    assert.deepEqual([...calls.entries()].filter(([, n]) => n > 1), [], 'no request reached the model twice');
    const lines = [];
    for await (const line of await client.messages.batches.results(id)) lines.push(line);
    assert.deepEqual(lines.map((l) => l.custom_id), requests.map((r) => r.custom_id), 'every request once, in order');
    const errored = lines.filter((l) => l.result.type === 'errored');
    assert.equal(errored.length, counts.errored);
    for (const l of errored) {
      assert.ok(l.result.type === 'errored');
      assert.equal(l.result.error.error.type, 'api_error');
      assert.match(l.result.error.error.message, /restarted/);
    }
    assert.equal(calls.size, REQUESTS - errored.filter((l) => !calls.has(l.custom_id)).length);
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
    await scratch.cleanup();
  }
});
