// The messages-style surface against the same request on /v1/chat/completions, side by
// side, on the offline engine and against the zero-latency fake upstream
// (bench/fake-upstream.mjs):
//   1. throughput: req/s with p50/p99 latency, non-streamed, the two surfaces taking
//      turns in rounds of BENCH_SECONDS at BENCH_CONNECTIONS;
//   2. time to first content at concurrency 1, streamed: to the first content_block_delta
//      of a message, to the first chunk carrying content of a chat completion (and to
//      the end of the stream), in interleaved rounds.
// Prints figures and the ratios messages/chat (target: within 10%); no assertions.
//
//   npm run bench:messages   (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS, BENCH_C1_REQUESTS)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, load, percentile, serverArgs, startChild, stopAll, type Figures } from './lib.ts';
import type { ChildProcess } from 'node:child_process';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const c1Requests = Number(process.env.BENCH_C1_REQUESTS ?? 200);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const prompt = 'Summarize: trains cross rivers near small towns every morning, and the towns wake to their sound.';

const surfaces = {
  chat: { path: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: prompt }], max_tokens: 128 }, first: /"content":"[^"]/ },
  messages: { path: '/api/messages/v1/messages', body: { model: 'agent', messages: [{ role: 'user', content: prompt }], max_tokens: 128 }, first: /event: content_block_delta/ },
} as const;
type Surface = keyof typeof surfaces;

/** One streamed request: ms to the first content and to the end. */
function streamOnce(port: number, agent: http.Agent, surface: Surface): Promise<{ first: number; total: number }> {
  const s = surfaces[surface];
  const payload = JSON.stringify({ ...s.body, stream: true });
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = -1;
    const req = http.request(
      { host: '127.0.0.1', port, path: s.path, method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`${surface}: HTTP ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          if (first < 0 && s.first.test(text)) first = performance.now() - t0;
        });
        res.on('end', () => resolve({ first, total: performance.now() - t0 }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function measure(port: number): Promise<Record<Surface, { load: Figures[]; first: number[]; total: number[] }>> {
  const out = { chat: { load: [] as Figures[], first: [] as number[], total: [] as number[] }, messages: { load: [] as Figures[], first: [] as number[], total: [] as number[] } };
  for (let round = 0; round < rounds; round++) {
    for (const surface of ['chat', 'messages'] as const) {
      const s = surfaces[surface];
      out[surface].load.push(
        await load({ url: `http://127.0.0.1:${port}${s.path}`, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(s.body), connections, duration: seconds }),
      );
    }
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < c1Requests; i++) {
    for (const surface of (i % 2 === 0 ? ['chat', 'messages'] : ['messages', 'chat']) as Surface[]) {
      const r = await streamOnce(port, agent, surface);
      if (i >= 10) {
        out[surface].first.push(r.first);
        out[surface].total.push(r.total);
      }
    }
  }
  agent.destroy();
  return out;
}

const children: ChildProcess[] = [];
const fakePort = await freePort();
children.push(await startChild([path.join(root, 'bench/fake-upstream.mjs')], { PORT: String(fakePort) }, `http://127.0.0.1:${fakePort}/`));
const setups: [string, Record<string, string>][] = [
  ['offline engine', {}],
  ['fake upstream', { UPSTREAM_BASE_URL: `http://127.0.0.1:${fakePort}/v1`, UPSTREAM_API_KEY: 'sk-fake-upstream-key', UPSTREAM_MODEL_AGENT: 'fake-model' }],
];
const sum = (figures: Figures[]) => ({
  rps: figures.reduce((a, f) => a + f.rps, 0) / figures.length,
  p50: percentile([...figures.map((f) => f.p50)].sort((a, b) => a - b), 0.5),
  p99: Math.max(...figures.map((f) => f.p99)),
  bad: figures.reduce((a, f) => a + f.errors + f.non2xx, 0),
});
try {
  for (const [name, env] of setups) {
    const port = await freePort();
    const child = await startChild(
      serverArgs(root),
      {
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'bench-messages-')),
        LOG_LEVEL: 'warn',
        AGENT_API_BOOTSTRAP_KEY: key,
        AGENT_API_BOOTSTRAP_CREDITS: '100000000',
        AGENT_API_MAX_RPM: '100000000',
        AGENT_API_ACCOUNT_CONCURRENCY: '1000',
        AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789',
        ...env,
      },
      `http://127.0.0.1:${port}/healthz`,
      60_000,
    );
    children.push(child);
    const r = await measure(port);
    console.log(`\n${name} (${rounds} rounds of ${seconds} s at ${connections} connections, non-streamed; ${c1Requests - 10} streamed requests each at concurrency 1):`);
    for (const surface of ['chat', 'messages'] as const) {
      const l = sum(r[surface].load);
      const first = [...r[surface].first].sort((a, b) => a - b);
      const total = [...r[surface].total].sort((a, b) => a - b);
      console.log(
        `  ${surface.padEnd(9)} ${l.rps.toFixed(0).padStart(6)} req/s  p50 ${l.p50} ms  p99 ${l.p99} ms  errors ${l.bad}   first content p50 ${percentile(first, 0.5).toFixed(3)} ms p99 ${percentile(first, 0.99).toFixed(3)} ms   whole stream p50 ${percentile(total, 0.5).toFixed(3)} ms`,
      );
    }
    const c = sum(r.chat.load);
    const m = sum(r.messages.load);
    const fc = percentile([...r.chat.first].sort((a, b) => a - b), 0.5);
    const fm = percentile([...r.messages.first].sort((a, b) => a - b), 0.5);
    console.log(`  messages/chat: req/s ${(m.rps / c.rps).toFixed(2)}x (target >= 0.90x), first content p50 ${(fm / fc).toFixed(2)}x (target <= 1.10x)`);
    await stopAll([child]);
    children.pop();
  }
} finally {
  await stopAll(children);
}
