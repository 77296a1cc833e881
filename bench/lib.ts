// Shared bench plumbing: free ports, child servers that are waited for and stopped,
// and autocannon runs summarised as requests per second and latency percentiles.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Lines a child wrote to stderr when started with `quietStderr` (a peer's own noise, counted instead of shown). */
export const stderrLines = new WeakMap<ChildProcess, { count: number; first?: string }>();

/**
 * The node arguments that start a checkout's server the way its own `npm start` does:
 * the compiled tree (scripts/start.mjs) where the checkout has one, else its sources
 * through tsx (older commits). Benches measure what an operator runs.
 */
export function serverArgs(dir: string): string[] {
  const start = path.join(dir, 'scripts/start.mjs');
  return fs.existsSync(start) ? [start] : ['--import', 'tsx', path.join(dir, 'src/main.ts')];
}

/** `cwd` matters for `--import tsx`: node resolves it from there (another checkout runs its own tsx). */
export async function startChild(args: string[], env: NodeJS.ProcessEnv, healthUrl: string, timeoutMs = 10_000, quietStderr = false, cwd?: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', quietStderr ? 'pipe' : 'inherit'], cwd });
  if (quietStderr) {
    const seen: { count: number; first?: string } = { count: 0 };
    stderrLines.set(child, seen);
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        seen.count++;
        seen.first ??= line.slice(0, 200);
      }
    });
  }
  for (let i = 0; i < timeoutMs / 50; i++) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(healthUrl);
      if (res.status < 500) return child;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  const exited = child.exitCode !== null ? ` (exited with code ${child.exitCode})` : '';
  child.kill('SIGKILL');
  throw new Error(`server did not start${exited}: ${args.join(' ')}`);
}

export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(opts: autocannon.Options): Promise<Figures> {
  const r = await autocannon({ connections: 50, duration: 10, ...opts });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/**
 * One autocannon run, unaggregated, so the slices of a target measured in several
 * rounds can be summed (`sumRounds`).
 */
export async function loadRaw(opts: autocannon.Options): Promise<autocannon.Result> {
  return (await autocannon({ connections: 50, duration: 10, ...opts, skipAggregateResult: true })) as autocannon.Result;
}

/** Rounds of one target as one figure: req/s = completed / seconds, latency from the merged histograms. */
export function sumRounds(rounds: autocannon.Result[]): Figures {
  // Unaggregated results carry encoded histograms and these counters (autocannon's run.js).
  const raw = rounds as unknown as { totalCompletedRequests: number; duration: number; errors: number; timeouts: number; non2xx: number }[];
  const done = raw.reduce((n, r) => n + r.totalCompletedRequests, 0);
  const secs = raw.reduce((n, r) => n + r.duration, 0);
  // aggregateResult is exported (autocannon.js) but missing from @types/autocannon.
  const merged = (autocannon as unknown as { aggregateResult(r: autocannon.Result[], opts?: object): autocannon.Result }).aggregateResult(rounds, { url: 'http://unused' });
  return {
    rps: secs > 0 ? done / secs : 0,
    p50: merged.latency.p50,
    p99: merged.latency.p99,
    errors: raw.reduce((n, r) => n + r.errors + r.timeouts, 0),
    non2xx: raw.reduce((n, r) => n + r.non2xx, 0),
  };
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux); undefined
 * elsewhere. Divided by the requests served between two readings it is a per-request
 * cost that other load on the machine disturbs far less than req/s.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}
// USER_HZ: 100 on every Linux architecture node runs on.
const ticksPerSecond = 100;

export function row(name: string, f: Figures): string {
  return `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(3)} ms   errors ${f.errors} non-2xx ${f.non2xx}`;
}

/** Nearest-rank percentile (p in 0..100) of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Stops every child still running, in parallel; never throws. */
export async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(children.map((c) => stopChild(c).catch(() => undefined)));
}

/** POSTs a JSON body with a bearer key on a kept-alive agent; the milliseconds until the whole answer came (a non-200 rejects). */
export function timedPost(port: number, urlPath: string, body: unknown, opts: { agent: http.Agent; key: string }): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: '127.0.0.1', port, path: urlPath, method: 'POST', agent: opts.agent, headers: { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
