// Large JSON bodies that end refused must not stall the event loop (issue 18, item 4):
// 4 clients sending ~9 MB bodies, on an account without credits and refused only by
// the contract on one with credits, while /healthz is polled. The senders and the probe
// run on a worker thread, so this thread's event loop is the server's alone.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../test/helpers/test-server.ts';

/** The target for /healthz p99 while the bodies arrive. */
const P99_BOUND_MS = 50;

let server: TestServer;
let broke: string;
let rich: string;

before(async () => {
  server = await startTestServer();
  broke = (await server.createKey({ account_id: (await server.createAccount(0)).id, permissions: { embeddings: true } })).key;
  rich = (await server.createKey({ account_id: (await server.createAccount(1_000)).id, permissions: { embeddings: true } })).key;
});
after(() => server.close());

interface Client {
  path: string;
  key: string;
  shape: 'huge-string' | 'many-messages' | 'number-arrays' | 'nested-numbers';
  invalid: boolean;
}
interface Answer {
  status: number;
  count: number;
  first: string;
}
interface LoadResult {
  healthz: number[];
  failedPolls: number;
  answers: Answer[][];
}

function runLoad(clients: Client[], durationMs: number): Promise<LoadResult> {
  const worker = new Worker(new URL('../../test/helpers/large-body-load.mjs', import.meta.url), {
    workerData: { origin: server.origin, durationMs, pollMs: 20, clients },
  });
  return new Promise<LoadResult>((resolve, reject) => {
    worker.on('message', (m: { type: string } & LoadResult) => m.type === 'done' && resolve(m));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the load worker exited with ${code}`)));
  }).finally(() => worker.terminate());
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

test('4 clients sending 9 MB bodies that end refused keep /healthz p99 under 50 ms', { timeout: 180_000 }, async () => {
  const clients: Client[] = [
    { path: '/v1/chat/completions', key: broke, shape: 'huge-string', invalid: false },
    { path: '/v1/chat/completions', key: rich, shape: 'many-messages', invalid: true },
    { path: '/v1/embeddings', key: rich, shape: 'number-arrays', invalid: true },
    { path: '/v1/embeddings', key: broke, shape: 'number-arrays', invalid: false },
  ];
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const result = await runLoad(clients, 12_000);
  loop.disable();

  // Every answer is the refusal the body deserves: no credits, or the field the contract refuses.
  const expected = [
    { status: 429, text: /insufficient_quota/ },
    { status: 400, text: /"param":"temperature"/ },
    { status: 400, text: /"param":"dimensions"/ },
    { status: 429, text: /insufficient_quota/ },
  ];
  result.answers.forEach((answers, i) => {
    assert.deepEqual(
      answers.map((a) => a.status),
      [expected[i]!.status],
      `client ${i} (${clients[i]!.shape}): ${JSON.stringify(answers)}`,
    );
    assert.match(answers[0]!.first, expected[i]!.text);
    assert.ok(answers[0]!.count >= 1);
  });

  const p99 = percentile(result.healthz, 0.99);
  const figures = `/healthz p50 ${percentile(result.healthz, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...result.healthz).toFixed(1)} ms over ${result.healthz.length} polls (${result.failedPolls} failed); event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms; bodies answered ${result.answers.map((a) => a[0]?.count).join(', ')}`;
  console.log(figures);
  assert.ok(result.healthz.length >= 100, `too few /healthz samples: ${figures}`);
  assert.equal(result.failedPolls, 0, figures);
  assert.ok(p99 < P99_BOUND_MS, figures);
});
