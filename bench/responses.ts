// A streamed response against the same request as a streamed chat completion, side by
// side, on the offline engine and against the zero-latency fake upstream
// (bench/fake-upstream.mjs):
//   1. time to first event (the first `data:` line after the request is sent) and to the
//      end of the stream, at concurrency 1, the two surfaces taking turns in rounds;
//   2. a turn's latency on the Responses WebSocket against the same request POSTed
//      (non-streamed) on a kept-alive connection, sequentially;
//   3. events per second: BENCH_CONNECTIONS streams kept in flight for BENCH_SECONDS,
//      counting `data:` events delivered (a Responses stream has more events per answer
//      than a chat stream: the created/in_progress/added/done events around the deltas,
//      so answers per second are printed too).
// Prints figures and the ratio responses/chat (target: within 10%); no assertions.
//
//   npm run bench:responses   (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_C1_REQUESTS, BENCH_DATABASE_URL,
//                              BENCH_BASELINE: another checkout with its own node_modules, measured
//                              the same way in the same run, each phase right after this tree's;
//                              BENCH_BASELINE_FIRST=1: right before it, to see what the order does)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { freePort, percentile, startChild, stopChild, serverArgs } from './lib.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const c1Requests = Number(process.env.BENCH_C1_REQUESTS ?? 200);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const prompt = 'Summarize: trains cross rivers near small towns every morning, and the towns wake to their sound.';

const surfaces = {
  chat: { path: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: prompt }], stream: true, max_tokens: 128 } },
  responses: { path: '/v1/responses', body: { model: 'agent', input: prompt, stream: true, max_output_tokens: 128, store: false } },
} as const;
type Surface = keyof typeof surfaces;

interface StreamResult {
  firstEventMs: number;
  totalMs: number;
  events: number;
}

function stream(port: number, agent: http.Agent, surface: Surface): Promise<StreamResult> {
  const { path: urlPath, body } = surfaces[surface];
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = -1;
    let events = 0;
    let tail = '';
    const req = http.request(
      { host: '127.0.0.1', port, path: urlPath, method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`${surface}: HTTP ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (first < 0) first = performance.now() - t0;
          const text = tail + chunk;
          const parts = text.split('\n\n');
          tail = parts.pop()!;
          for (const p of parts) if (p.includes('data: ')) events++;
        });
        res.on('end', () => resolve({ firstEventMs: first, totalMs: performance.now() - t0, events }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function sequential(port: number): Promise<Record<Surface, { first: number[]; total: number[]; events: number }>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out = { chat: { first: [] as number[], total: [] as number[], events: 0 }, responses: { first: [] as number[], total: [] as number[], events: 0 } };
  for (let i = 0; i < 10; i++) for (const s of ['chat', 'responses'] as const) await stream(port, agent, s); // warm-up
  const rounds = 8;
  for (let r = 0; r < rounds; r++) {
    for (const s of (r % 2 ? ['responses', 'chat'] : ['chat', 'responses']) as Surface[]) {
      for (let i = 0; i < c1Requests / rounds; i++) {
        const res = await stream(port, agent, s);
        out[s].first.push(res.firstEventMs);
        out[s].total.push(res.totalMs);
        out[s].events = res.events;
      }
    }
  }
  agent.destroy();
  return out;
}

/** Turn latency: a WebSocket response.create to its last event, against the same request POSTed whole. */
async function turns(port: number): Promise<{ ws: number[]; post: number[] }> {
  const body = { model: 'agent', input: prompt, max_output_tokens: 128, store: false };
  const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let done: (() => void) | null = null;
  ws.on('message', (d) => {
    const type = (JSON.parse(String(d)) as { type: string }).type;
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'error') done?.();
  });
  const wsTurn = () => new Promise<number>((resolve) => {
    const t0 = performance.now();
    done = () => resolve(performance.now() - t0);
    ws.send(JSON.stringify({ type: 'response.create', ...body }));
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const payload = JSON.stringify(body);
  const post = () => new Promise<number>((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/responses', method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
    req.end(payload);
  });
  const out = { ws: [] as number[], post: [] as number[] };
  for (let i = 0; i < 10; i++) await wsTurn(), await post();
  for (let i = 0; i < c1Requests; i++) {
    out.ws.push(await wsTurn());
    out.post.push(await post());
  }
  ws.close();
  agent.destroy();
  return out;
}

async function concurrent(port: number, surface: Surface): Promise<{ eventsPerSec: number; answersPerSec: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const until = performance.now() + seconds * 1000;
  let events = 0;
  let answers = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const r = await stream(port, agent, surface);
        events += r.events;
        answers++;
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  agent.destroy();
  return { eventsPerSec: events / s, answersPerSec: answers / s };
}

async function measure(label: string, upstream: string | undefined, dir = root): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-responses-'));
  const port = await freePort();
  const api = await startChild(
    serverArgs(dir),
    {
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
      AGENT_API_BOOTSTRAP_KEY: key,
      AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789',
      AGENT_API_BOOTSTRAP_CREDITS: '1000000',
      AGENT_API_MAX_RPM: '100000000',
      AGENT_API_ACCOUNT_CONCURRENCY: String(connections * 4),
      LOG_LEVEL: 'warn',
      ...(upstream ? { UPSTREAM_BASE_URL: upstream, UPSTREAM_MODEL_AGENT: 'fake-model', UPSTREAM_PRICE_INPUT_PER_MTOK: '0.5', UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1.5' } : {}),
    },
    `http://127.0.0.1:${port}/healthz`,
    20_000,
    false,
    dir,
  );
  try {
    const seq = await sequential(port);
    const turn = await turns(port);
    const load = { chat: await concurrent(port, 'chat'), responses: await concurrent(port, 'responses') };
    const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q).toFixed(2);
    console.log(`\n${label}`);
    console.log(`  ${'surface'.padEnd(11)} ${'first event p50/p90 ms'.padEnd(24)} ${'whole stream p50 ms'.padEnd(20)} ${'events/answer'.padEnd(14)} ${`events/s (c=${connections})`.padEnd(18)} answers/s`);
    for (const s of ['chat', 'responses'] as const) {
      console.log(`  ${s.padEnd(11)} ${`${p(seq[s].first, 50)} / ${p(seq[s].first, 90)}`.padEnd(24)} ${p(seq[s].total, 50).padEnd(20)} ${String(seq[s].events).padEnd(14)} ${load[s].eventsPerSec.toFixed(0).padEnd(18)} ${load[s].answersPerSec.toFixed(0)}`);
    }
    const ratio = (a: number, b: number) => `${((a / b) * 100).toFixed(1)}%`;
    const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    console.log(`  WebSocket turn p50/p90 ms ${p(turn.ws, 50)} / ${p(turn.ws, 90)}   POST (whole response) p50/p90 ms ${p(turn.post, 50)} / ${p(turn.post, 90)}`);
    console.log(`  responses/chat: first event ${ratio(median(seq.responses.first), median(seq.chat.first))}, events/s ${ratio(load.responses.eventsPerSec, load.chat.eventsPerSec)}, answers/s ${ratio(load.responses.answersPerSec, load.chat.answersPerSec)}`);
  } finally {
    await stopChild(api);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fakePort = await freePort();
const fake = await startChild([path.join(root, 'bench/fake-upstream.mjs')], { PORT: String(fakePort) }, `http://127.0.0.1:${fakePort}/`, 10_000);
const baseline = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;
const commitOf = (dir: string) => {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
};
const builds = [{ label: `this tree (${commitOf(root)})`, dir: root }, ...(baseline ? [{ label: `baseline @${commitOf(baseline)}`, dir: baseline }] : [])];
if (process.env.BENCH_BASELINE_FIRST === '1') builds.reverse();
try {
  for (const [phase, upstream] of [['offline engine', undefined], ['zero-latency fake upstream', `http://127.0.0.1:${fakePort}/v1`]] as const) {
    for (const b of builds) await measure(builds.length > 1 ? `${phase}: ${b.label}` : phase, upstream, b.dir);
  }
} finally {
  await stopChild(fake);
}
