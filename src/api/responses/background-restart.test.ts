// A background response survives its server: stopped by SIGTERM it goes back to queued
// and the next process runs it to completed; cut off by `kill -9` it is not run twice
// but ends failed with an error once another process takes over; either way it never
// stays in_progress and no credits stay held. The server is a real child process.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI from 'openai';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';
import { freePort, startChildApp } from '../../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../../test/helpers/test-server.ts';


let upstream: FakeUpstream;
before(async () => {
  // 60 words, one every 25 ms: long enough to stop the server in the middle.
  upstream = await startFakeUpstream(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    for (let i = 0; i < 60 && !res.destroyed; i++) {
      res.write(chunk({ content: `word${i} ` }));
      await delay(25);
    }
    if (res.destroyed) return;
    res.write(chunk({}, 'stop'));
    res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 5, completion_tokens: 60 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
});
after(() => upstream.close());


function startServer(scratch: { dir: string; url: string }, port: number): Promise<ChildProcess> {
  return startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: 'background-restart',
    AGENT_API_JOBS_POLL_MS: '50',
    // A crashed run's job is taken over after its lease; kept short here.
    AGENT_API_JOB_LEASE_MS: '1500',
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL_AGENT: 'up',
    UPSTREAM_PRICE_INPUT_PER_MTOK: '1',
    UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1',
    UPSTREAM_MAX_RETRIES: '0',
  });
}

for (const [how, signal] of [
  ['SIGTERM: it runs again and completes', 'SIGTERM'],
  ['kill -9: it ends failed, never run twice', 'SIGKILL'],
] as const) {
  test(`a background response after ${how}`, async () => {
    const scratch = await scratchDatabase();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    let child = await startServer(scratch, port);
    try {
      const admin = async (method: string, p: string, body?: unknown) =>
        (await fetch(`${origin}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) })).json() as Promise<Record<string, any>>;
      const account = await admin('POST', '/accounts', { name: `bg-${signal}-${Date.now()}`, credits: 10 });
      const { key } = await admin('POST', '/keys', { account_id: account.id, name: 'bg' });
      const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0 });
      const calls = upstream.requests.length;
      const queued = await client.responses.create({ model: 'agent', input: 'tell me a long story', background: true });
      for (let i = 0; i < 400 && upstream.requests.length === calls; i++) await delay(10);
      assert.ok(upstream.requests.length > calls, 'the model was called');
      await delay(300); // mid-answer
      assert.equal((await client.responses.retrieve(queued.id)).status, 'in_progress');
      child.kill(signal);
      await once(child, 'exit');

      child = await startServer(scratch, port);
      let r = await client.responses.retrieve(queued.id);
      for (let i = 0; i < 600 && (r.status === 'queued' || r.status === 'in_progress'); i++) {
        await delay(25);
        r = await client.responses.retrieve(queued.id);
      }
      let acct = await admin('GET', `/accounts/${account.id}`);
      for (let i = 0; i < 200 && acct.reserved_credits > 0; i++) {
        await delay(25);
        acct = await admin('GET', `/accounts/${account.id}`);
      }
      assert.equal(acct.reserved_credits, 0, 'no credits stay held');
      if (signal === 'SIGTERM') {
        assert.equal(r.status, 'completed');
        assert.match(r.output_text, /word59/);
        assert.equal(upstream.requests.length, calls + 2, 'cut off once, then run again whole');
      } else {
        assert.equal(r.status, 'failed');
        assert.match(r.error!.message, /interrupted by a restart/);
        assert.equal(upstream.requests.length, calls + 1, 'not run twice');
        assert.equal(acct.credits, 10, 'the crashed run was charged nothing');
      }
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
      await scratch.cleanup();
    }
  });
}
