// /healthz latency while clients send ~9 MB JSON bodies that end refused (issue 18,
// item 4): from an account without credits, and refused by the contract only (a key
// with credits, a wrong field after a whole body's worth of it), for several body
// shapes, against agent-api in a child process. The senders and the /healthz probe run
// on worker threads (test/helpers/large-body-load.ts). A phase without senders first
// says what this machine gives anyway.
//
//   npm run bench:large-bodies     (BENCH_SECONDS per phase, BENCH_CLIENTS,
//                                   BENCH_TREE=<another checkout> to measure that one,
//                                   BENCH_DATABASE_URL=postgres://... for PostgreSQL)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runLargeBodyLoad, type BodyShape, type LoadResult } from '../test/helpers/large-body-load.ts';
import { freePort, percentile, startChild, stopChild, serverArgs } from './lib.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const clients = Number(process.env.BENCH_CLIENTS ?? 4);
const tree = path.resolve(process.env.BENCH_TREE ?? path.resolve(import.meta.dirname, '..'));
const adminToken = 'agent-bench-admin-0123456789abcdef';

const SHAPES: { shape: BodyShape; path: string; note: string }[] = [
  { shape: 'huge-string', path: '/v1/chat/completions', note: 'one 9 MB string' },
  { shape: 'many-messages', path: '/v1/chat/completions', note: '20,000 messages' },
  { shape: 'number-arrays', path: '/v1/embeddings', note: '2,048 token arrays' },
  { shape: 'nested-numbers', path: '/v1/chat/completions', note: 'numbers 8 arrays deep' },
];

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-large-'));
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const api = await startChild(
  serverArgs(tree),
  { PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '', AGENT_API_ADMIN_TOKEN: adminToken, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  `${origin}/healthz`,
  60_000,
);

async function admin<T>(method: string, urlPath: string, body: unknown): Promise<T> {
  const res = await fetch(`${origin}/admin/v1${urlPath}`, { method, headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${urlPath}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}
async function keyWith(credits: number): Promise<string> {
  const account = await admin<{ id: string }>('POST', '/accounts', { name: `bench-${credits}-${Date.now()}`, credits });
  return (await admin<{ key: string }>('POST', '/keys', { account_id: account.id, name: 'bench', permissions: { embeddings: true } })).key;
}

/** The server's own event-loop delay since the last scrape (prom-client resets it on each). */
async function loopDelay(): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

/** The server's event-loop thread: [ms on a CPU, ms waiting for one] so far (Linux), or null. */
function mainThread(): [number, number] | null {
  try {
    const [onCpu, waiting] = fs.readFileSync(`/proc/${api.pid}/task/${api.pid}/schedstat`, 'utf8').split(' ');
    return [Number(onCpu) / 1e6, Number(waiting) / 1e6];
  } catch {
    return null;
  }
}

async function phase(name: string, list: Parameters<typeof runLargeBodyLoad>[1]): Promise<void> {
  await loopDelay();
  const before = mainThread();
  const r = await runLargeBodyLoad(origin, list, seconds * 1000);
  const after = mainThread();
  const bodies = r.answers.flat().reduce((n, a) => n + a.count, 0);
  const cpu = before && after ? `  event loop on a CPU ${(after[0] - before[0]).toFixed(0)} ms${bodies ? ` (${((after[0] - before[0]) / bodies).toFixed(1)} ms a body)` : ''}, waiting for one ${(after[1] - before[1]).toFixed(0)} ms` : '';
  console.log(row(name, r, await loopDelay()) + cpu);
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-').padStart(7);
function row(name: string, r: LoadResult, loop: { p99: number; max: number }): string {
  const ms = [...r.healthz].sort((a, b) => a - b);
  const answered = r.answers.flat();
  const statuses = [...new Set(answered.map((a) => a.status))].sort().map((s) => `${s} x${answered.filter((a) => a.status === s).reduce((n, a) => n + a.count, 0)}`);
  const bodies = answered.reduce((n, a) => n + a.count, 0);
  return `${name.padEnd(44)} /healthz p50 ${fmt(percentile(ms, 50))} p99 ${fmt(percentile(ms, 99))} max ${fmt(ms.at(-1) ?? NaN)} ms (${ms.length} polls${r.failedPolls ? `, ${r.failedPolls} failed` : ''})  loop delay p99 ${fmt(loop.p99)} max ${fmt(loop.max)} ms  bodies ${(bodies / seconds).toFixed(1).padStart(5)}/s  ${statuses.join(', ')}`;
}

try {
  const broke = await keyWith(0);
  const rich = await keyWith(1_000_000);
  console.log(`/healthz polled every 20 ms while ${clients} clients send ~9 MB JSON bodies, ${seconds} s a phase; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}; tree ${tree}`);
  await phase('no senders', []);
  for (const s of SHAPES) {
    for (const [label, key, invalid] of [
      ['no credits', broke, false],
      ['refused by the contract', rich, true],
    ] as const) {
      // nested-numbers is refused by the contract whatever the key.
      if (s.shape === 'nested-numbers' && key === broke) continue;
      const list = Array.from({ length: clients }, () => ({ path: s.path, key, shape: s.shape, invalid }));
      await phase(`${s.note}, ${label}`, list);
    }
  }
} finally {
  await stopChild(api);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
