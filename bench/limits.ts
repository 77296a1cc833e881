// What counting limits on Redis costs a request: the same non-streamed POST
// /v1/chat/completions on the offline engine through two agent-api processes on SQLite,
// one counting its limits in-process, one on Redis (REDIS_URL: an RPM check and a slot
// lease per request, the lease given back at its end), in one run:
//   1. at concurrency 1 (node:http + performance.now()), targets taking turns in rounds
//      so drift hits them alike: p50 / p99 latency and the added p50;
//   2. under load (autocannon, BENCH_CONNECTIONS) in turns of slices: req/s, p50/p99, and
//      the server's CPU time per request (and redis-server's, when the bench started it).
//
//   npx tsx bench/limits.ts   (BENCH_SECONDS, BENCH_RPS_ROUNDS, BENCH_CONNECTIONS,
//                              BENCH_C1_REQUESTS, BENCH_C1_ROUNDS, BENCH_REDIS_URL: a
//                              Redis to use instead of starting redis-server)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, loadRaw, percentile, processCpuMs, serverArgs, startChild, stopAll, sumRounds, timedPost, type Figures } from './lib.ts';
import type autocannon from 'autocannon';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const rpsRounds = Math.max(1, Number(process.env.BENCH_RPS_ROUNDS ?? 5));
const c1Requests = Number(process.env.BENCH_C1_REQUESTS ?? 400);
const c1Rounds = Number(process.env.BENCH_C1_ROUNDS ?? 8);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const body = { model: 'agent', messages: [{ role: 'user', content: 'What is 6 * 7?' }], max_tokens: 16 };

interface Target {
  name: string;
  port: number;
  proc: ChildProcess;
  agent: http.Agent;
}

async function startRedis(): Promise<{ url: string; proc?: ChildProcess; dir?: string }> {
  if (process.env.BENCH_REDIS_URL) return { url: process.env.BENCH_REDIS_URL };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-redis-'));
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) return { url: `redis://127.0.0.1:${port}`, proc, dir };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start (is it installed?)');
}

const redis = await startRedis();
const dirs: string[] = redis.dir ? [redis.dir] : [];
const children: ChildProcess[] = [];

async function startTarget(name: string, extra: Record<string, string>): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-'));
  dirs.push(dataDir);
  const port = await freePort();
  const proc = await startChild(
    serverArgs(root),
    {
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      UPSTREAM_BASE_URL: '',
      AGENT_API_BOOTSTRAP_KEY: key,
      AGENT_API_BOOTSTRAP_CREDITS: '100000000',
      // Neither limit may refuse the bench's own load: only their cost is measured.
      AGENT_API_MAX_RPM: '100000000',
      AGENT_API_ACCOUNT_CONCURRENCY: String(connections * 4),
      LOG_LEVEL: 'warn',
      ...extra,
    },
    `http://127.0.0.1:${port}/healthz`,
    60_000,
  );
  children.push(proc);
  return { name, port, proc, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
}

try {
  const targets = [await startTarget('in-process limits', {}), await startTarget('limits on Redis', { REDIS_URL: redis.url })];
  const ready = await fetch(`http://127.0.0.1:${targets[1]!.port}/readyz`).then((r) => r.json());
  if ((ready as { redis?: { ok: boolean } }).redis?.ok !== true) throw new Error(`the Redis target is not ready: ${JSON.stringify(ready)}`);

  // Warm up (JIT, the key cache, the scripts loaded on Redis).
  for (const t of targets) for (let i = 0; i < 300; i++) await timedPost(t.port, '/v1/chat/completions', body, { agent: t.agent, key });

  // 1. Concurrency 1, in rounds.
  const c1 = new Map<Target, number[]>(targets.map((t) => [t, []]));
  for (let round = 0; round < c1Rounds; round++) {
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      for (let i = 0; i < Math.ceil(c1Requests / c1Rounds); i++) c1.get(t)!.push(await timedPost(t.port, '/v1/chat/completions', body, { agent: t.agent, key }));
    }
  }

  // 2. Under load, in slices.
  const slices = new Map<Target, autocannon.Result[]>(targets.map((t) => [t, []]));
  const cpu = new Map<Target, { ms: number; requests: number; redisMs: number }>(targets.map((t) => [t, { ms: 0, requests: 0, redisMs: 0 }]));
  const sliceSeconds = Math.max(1, Math.round(seconds / rpsRounds));
  for (let round = 0; round < rpsRounds; round++) {
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      const before = processCpuMs(t.proc.pid);
      const redisBefore = processCpuMs(redis.proc?.pid);
      const r = await loadRaw({
        url: `http://127.0.0.1:${t.port}/v1/chat/completions`,
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        duration: sliceSeconds,
        connections,
      });
      slices.get(t)!.push(r);
      const after = processCpuMs(t.proc.pid);
      const redisAfter = processCpuMs(redis.proc?.pid);
      const c = cpu.get(t)!;
      c.requests += (r as unknown as { totalCompletedRequests: number }).totalCompletedRequests;
      if (before !== undefined && after !== undefined) c.ms += after - before;
      if (redisBefore !== undefined && redisAfter !== undefined) c.redisMs += redisAfter - redisBefore;
    }
  }

  console.log(`POST /v1/chat/completions (offline engine, non-streamed), SQLite, node ${process.version}, ${os.cpus().length} cores`);
  console.log(`\nconcurrency 1, ${c1Requests} requests each in ${c1Rounds} rounds:`);
  const p50s: number[] = [];
  for (const t of targets) {
    const sorted = c1.get(t)!.sort((a, b) => a - b);
    p50s.push(percentile(sorted, 50));
    console.log(`  ${t.name.padEnd(20)} p50 ${percentile(sorted, 50).toFixed(3)} ms   p90 ${percentile(sorted, 90).toFixed(3)} ms   p99 ${percentile(sorted, 99).toFixed(3)} ms`);
  }
  console.log(`  added p50 with Redis: ${(p50s[1]! - p50s[0]!).toFixed(3)} ms`);

  console.log(`\n${connections} connections, ${rpsRounds} slices of ${sliceSeconds} s each:`);
  const figures: Figures[] = [];
  for (const t of targets) {
    const f = sumRounds(slices.get(t)!);
    figures.push(f);
    const c = cpu.get(t)!;
    const perReq = c.requests ? ((c.ms / c.requests) * 1000).toFixed(0) : '?';
    const redisPerReq = redis.proc && c.requests ? `, redis-server ${((c.redisMs / c.requests) * 1000).toFixed(0)} µs` : '';
    console.log(`  ${t.name.padEnd(20)} ${f.rps.toFixed(0).padStart(6)} req/s   p50 ${f.p50} ms   p99 ${f.p99} ms   errors ${f.errors} non-2xx ${f.non2xx}   CPU/request: server ${perReq} µs${redisPerReq}`);
  }
  console.log(`  Redis / in-process req/s: ${(figures[1]!.rps / figures[0]!.rps).toFixed(3)}`);
} finally {
  await stopAll([...children, ...(redis.proc ? [redis.proc] : [])]);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
}
