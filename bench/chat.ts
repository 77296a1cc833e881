// POST /v1/chat/completions against a zero-latency fake OpenAI-compatible upstream
// (bench/fake-upstream.mjs), in one run: (a) direct to the fake, (b) through agent-api
// (auth, limits, credit ledger, activity log, upstream provider), (b') optionally through
// a second agent-api build, e.g. an older commit (BENCH_COMPARE_REF / BENCH_BASELINE), so
// a regression shows on the same machine in the same window, and (c) through the Portkey
// gateway (@portkey-ai/gateway) pointed at the same fake. Measures:
//   1. non-streaming req/s and p50/p99 (autocannon, BENCH_CONNECTIONS, BENCH_SECONDS per
//      target), and the same for streaming (BENCH_STREAM_RPS=0 skips it); the seconds are
//      cut into BENCH_RPS_ROUNDS slices and the targets take turns slice by slice, so
//      drift of a shared machine hits them alike; with each, the server's CPU time per
//      request (from /proc, Linux), which other load disturbs far less than req/s;
//   2. at concurrency 1 with sub-ms precision (node:http + performance.now()): the
//      streamed time to first byte carrying a `data:` event, the time to the first
//      content delta and to the end of the stream, and the non-streaming latency;
//      targets take turns in rounds (BENCH_C1_ROUNDS) so drift hits them alike;
//   3. the ratios: agent-api/Portkey req/s, agent-api's added p50 over direct (target
//      under 1 ms), the TTFB deltas, and this tree against the baseline build.
// A target that fails to start or answers non-2xx is reported as such, not fatal.
//
//   npm run bench:chat     (BENCH_SECONDS, BENCH_RPS_ROUNDS, BENCH_CONNECTIONS,
//                           BENCH_C1_REQUESTS, BENCH_C1_ROUNDS, BENCH_C1_WARMUP,
//                           BENCH_STREAM_RPS, BENCH_DATABASE_URL, BENCH_COMPARE_REF,
//                           BENCH_BASELINE, BENCH_NODE_FLAGS: node/V8 flags for
//                           every agent-api build, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof)
//
// Against an older commit: check it out beside this tree with its own packages, then
// name it (the bench says how when the directory is missing):
//   git worktree add --detach ../agent-api-6d5eaad 6d5eaad
//   npm --prefix ../agent-api-6d5eaad ci --no-audit --no-fund
//   BENCH_COMPARE_REF=6d5eaad npm run bench:chat
// BENCH_BASELINE=/some/checkout names the directory instead (with BENCH_COMPARE_REF it
// must be checked out at that commit). Each tree starts as its own `npm start` does
// (bench/lib.ts serverArgs: compiled where it has scripts/start.mjs, else its sources
// through tsx), with its own node_modules and the same environment.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';
import type autocannon from 'autocannon';
import { freePort, loadRaw, percentile, processCpuMs, startChild, stderrLines, stopAll, sumRounds, type Figures, serverArgs } from './lib.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const c1Requests = Number(process.env.BENCH_C1_REQUESTS ?? 400);
const c1Warmup = Number(process.env.BENCH_C1_WARMUP ?? 10);
const c1Rounds = Number(process.env.BENCH_C1_ROUNDS ?? 8);
const rpsRounds = Math.max(1, Number(process.env.BENCH_RPS_ROUNDS ?? 5));
const streamRps = process.env.BENCH_STREAM_RPS !== '0';
const compareRef = process.env.BENCH_COMPARE_REF || undefined;
// Extra node/V8 flags for every agent-api build (to try a flag on both builds alike).
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const warmSeconds = 2;
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const adminToken = 'agent-bench-admin-0123456789abcdef';
const upstreamKey = 'sk-fake-upstream-key';

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  model: string;
  /** Why the target cannot be measured (did not start); undefined when it is up. */
  down?: string;
  agent: http.Agent;
  /** The target's own server process (its CPU time is read per request); not for direct, whose fake is shared. */
  proc?: ChildProcess;
}

/** The checkout to compare with, its label, or why it cannot run (the bench then stops and says how to prepare it). */
function baseline(): { dir: string; label: string } | undefined {
  const dir = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : compareRef && path.resolve(root, '..', `agent-api-${compareRef}`);
  if (!dir) return undefined;
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  const prepare = compareRef
    ? `prepare it with:\n  git -C ${root} worktree add --detach ${dir} ${compareRef}\n  npm --prefix ${dir} ci --no-audit --no-fund\n(or set BENCH_BASELINE to a checkout of ${compareRef} that has its own node_modules)`
    : 'BENCH_BASELINE must name a checkout of agent-api with its own node_modules (npm ci there)';
  if (!fs.existsSync(path.join(dir, 'src/main.ts')) || !fs.existsSync(path.join(dir, 'node_modules/tsx'))) {
    console.error(`bench:chat: no baseline checkout with packages at ${dir}; ${prepare}`);
    process.exit(2);
  }
  let head: string;
  try {
    head = git('rev-parse', 'HEAD');
  } catch {
    head = 'unknown';
  }
  if (compareRef && head !== 'unknown') {
    let want: string;
    try {
      want = git('rev-parse', `${compareRef}^{commit}`);
    } catch {
      want = compareRef;
    }
    if (want !== head) {
      console.error(`bench:chat: ${dir} is at ${head.slice(0, 7)}, not ${compareRef}; ${prepare}`);
      process.exit(2);
    }
  }
  return { dir, label: `@${head.slice(0, 7)}` };
}
const base = baseline();

const children: ChildProcess[] = [];
const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-'));
let cleaned = false;
async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  await stopAll(children);
  fs.rmSync(dataRoot, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

const pkgVersion = (name: string, from = root): string => {
  try {
    return JSON.parse(fs.readFileSync(path.join(from, 'node_modules', name, 'package.json'), 'utf8')).version as string;
  } catch {
    return 'not installed';
  }
};

const messages = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Say hello in one short sentence.' },
];
const bodyFor = (t: Target, stream: boolean): string =>
  JSON.stringify(stream ? { model: t.model, messages, stream: true, stream_options: { include_usage: true } } : { model: t.model, messages });
const headersFor = (t: Target, body: string) => ({ ...t.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });

// --- one timed request over a kept-alive connection ---------------------------------

interface Timing {
  ok: boolean;
  status: number;
  /** ms to the first body bytes carrying a `data:` event (streams), or to the first body byte */
  ttfb: number;
  /** ms to the first event whose delta has non-empty content (streams) */
  firstContent: number;
  /** ms to the end of the response */
  total: number;
  error?: string;
}

function timed(t: Target, stream: boolean): Promise<Timing> {
  const body = bodyFor(t, stream);
  const u = new URL(t.url);
  return new Promise((resolve) => {
    let ttfb = NaN;
    let firstContent = NaN;
    let text = '';
    let scanned = 0;
    const start = performance.now();
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: t.agent, headers: headersFor(t, body) },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          text += chunk;
          if (Number.isNaN(ttfb) && (!stream || text.includes('data:'))) ttfb = now - start;
          if (!stream || !Number.isNaN(firstContent)) return;
          // Whole events only: scan up to the last blank line.
          const end = text.lastIndexOf('\n\n');
          if (end < scanned) return;
          for (const event of text.slice(scanned, end).split('\n\n')) {
            for (const line of event.split('\n')) {
              if (!line.startsWith('data:') || line.includes('[DONE]')) continue;
              try {
                const content = JSON.parse(line.slice(5)).choices?.[0]?.delta?.content;
                if (typeof content === 'string' && content !== '' && Number.isNaN(firstContent)) firstContent = now - start;
              } catch {}
            }
          }
          scanned = end + 2;
        });
        res.on('end', () => {
          const total = performance.now() - start;
          const status = res.statusCode ?? 0;
          let ok = status >= 200 && status < 300;
          let error: string | undefined;
          if (!ok) error = `HTTP ${status}: ${text.slice(0, 300)}`;
          else if (stream && !/data: ?\[DONE\]/.test(text)) [ok, error] = [false, `stream without [DONE]: ${text.slice(0, 300)}`];
          else if (!stream) {
            try {
              if (typeof JSON.parse(text).choices?.[0]?.message?.content !== 'string') [ok, error] = [false, `no message content: ${text.slice(0, 300)}`];
            } catch {
              [ok, error] = [false, `not JSON: ${text.slice(0, 300)}`];
            }
          }
          resolve({ ok, status, ttfb, firstContent, total, error });
        });
        res.on('error', (err) => resolve({ ok: false, status: res.statusCode ?? 0, ttfb, firstContent, total: NaN, error: err.message }));
      },
    );
    req.on('error', (err) => resolve({ ok: false, status: 0, ttfb, firstContent, total: NaN, error: err.message }));
    req.end(body);
  });
}

interface Dist {
  p50: number;
  p99: number;
}
interface Sequential {
  n: number;
  failed: number;
  firstError?: string;
  ttfb: Dist;
  firstContent: Dist;
  total: Dist;
}

const dist = (xs: number[]): Dist => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};

/** Appends `n` sequential timed requests (after `warmup` untimed ones) to `runs`. */
async function sequential(t: Target, stream: boolean, n: number, warmup: number, runs: Timing[]): Promise<void> {
  for (let i = 0; i < warmup; i++) await timed(t, stream);
  for (let i = 0; i < n; i++) runs.push(await timed(t, stream));
}

function summarize(runs: Timing[]): Sequential {
  const good = runs.filter((r) => r.ok);
  return {
    n: runs.length,
    failed: runs.length - good.length,
    firstError: runs.find((r) => !r.ok)?.error,
    ttfb: dist(good.map((r) => r.ttfb)),
    firstContent: dist(good.map((r) => r.firstContent)),
    total: dist(good.map((r) => r.total)),
  };
}

/**
 * Concurrency 1, in rounds: each round gives every target a block of sequential requests
 * in turn, so all targets are measured across the same stretch of time and a machine
 * that drifts (other tenants, frequency) biases none of them.
 */
async function concurrencyOne(up: Target[], stream: boolean): Promise<Map<Target, Sequential>> {
  const runs = new Map(up.map((t) => [t, [] as Timing[]]));
  const block = Math.max(1, Math.ceil(c1Requests / c1Rounds));
  for (let round = 0; round < c1Rounds; round++) {
    for (const t of up) await sequential(t, stream, block, c1Warmup, runs.get(t)!);
  }
  return new Map(up.map((t) => [t, summarize(runs.get(t)!)]));
}

interface Throughput extends Figures {
  /** The target server's CPU time per completed request, in µs (undefined: not measured). */
  cpuUs?: number;
}

function slice(t: Target, stream: boolean, duration: number): Promise<autocannon.Result> {
  const body = bodyFor(t, stream);
  return loadRaw({ url: t.url, method: 'POST', body, headers: { ...t.headers, 'content-type': 'application/json' }, duration, connections });
}

/** BENCH_SECONDS per target in BENCH_RPS_ROUNDS slices, the targets taking turns slice by slice. */
async function throughput(up: Target[], stream: boolean, duration: number, rounds: number): Promise<Map<Target, Throughput>> {
  const slices = new Map(up.map((t) => [t, [] as autocannon.Result[]]));
  const cpu = new Map(up.map((t) => [t, 0]));
  for (let round = 0; round < rounds; round++) {
    for (const t of up) {
      const before = processCpuMs(t.proc?.pid);
      slices.get(t)!.push(await slice(t, stream, duration / rounds));
      const after = processCpuMs(t.proc?.pid);
      cpu.set(t, before === undefined || after === undefined ? NaN : cpu.get(t)! + after - before);
    }
  }
  return new Map(
    up.map((t) => {
      const done = (slices.get(t)! as unknown as { totalCompletedRequests: number }[]).reduce((n, r) => n + r.totalCompletedRequests, 0);
      const ms = cpu.get(t)!;
      return [t, { ...sumRounds(slices.get(t)!), cpuUs: t.proc && Number.isFinite(ms) && done > 0 ? (ms * 1000) / done : undefined }];
    }),
  );
}

// --- formatting ---------------------------------------------------------------------

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(3)} ms` : 'n/a');
const signed = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(3)} ms` : 'n/a');
const nameWidth = 18;
const pad = (s: string, n = nameWidth) => s.padEnd(n);

function rpsRow(t: Target, f: Throughput | undefined): string {
  if (!f) return `  ${pad(t.name)} not measured: ${t.down}`;
  const bad = f.errors + f.non2xx > 0 ? `   <-- FAILING: ${f.non2xx} non-2xx, ${f.errors} errors/timeouts` : '';
  const cpu = f.cpuUs === undefined ? '' : `   server CPU ${f.cpuUs.toFixed(0).padStart(4)} µs/req`;
  return `  ${pad(t.name)} ${f.rps.toFixed(0).padStart(7)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(3)} ms${cpu}   non-2xx ${f.non2xx}  errors ${f.errors}${bad}`;
}

function seqRow(t: Target, s: Sequential | undefined, stream: boolean): string {
  if (!s) return `  ${pad(t.name)} not measured: ${t.down}`;
  const fail = s.failed > 0 ? `   <-- FAILING: ${s.failed}/${s.n} failed, first: ${s.firstError}` : '';
  if (s.failed === s.n) return `  ${pad(t.name)} all ${s.n} requests failed: ${s.firstError}`;
  if (!stream) return `  ${pad(t.name)} latency p50 ${ms(s.total.p50)}  p99 ${ms(s.total.p99)}${fail}`;
  return (
    `  ${pad(t.name)} TTFB p50 ${ms(s.ttfb.p50)}  p99 ${ms(s.ttfb.p99)}   first content p50 ${ms(s.firstContent.p50)}  p99 ${ms(s.firstContent.p99)}` +
    `   whole stream p50 ${ms(s.total.p50)}  p99 ${ms(s.total.p99)}${fail}`
  );
}

// --- run ----------------------------------------------------------------------------

const targets: Target[] = [];
let portkeyProcess: ChildProcess | undefined;

/** Starts one agent-api build (its own data directory and database), credits its account; sets `t.down` when it cannot run. */
async function startApi(t: Target, dir: string, port: number, databaseUrl: string): Promise<void> {
  let started = false;
  try {
    const dataDir = fs.mkdtempSync(path.join(dataRoot, 'api-'));
    t.proc = await startChild(
      [...nodeFlags, ...serverArgs(dir)],
      {
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        AGENT_API_BOOTSTRAP_KEY: key,
        AGENT_API_ADMIN_TOKEN: adminToken,
        // The bench key must not be throttled by the per-minute ceiling or the account's concurrency.
        AGENT_API_MAX_RPM: '100000000',
        AGENT_API_ACCOUNT_CONCURRENCY: '1000',
        UPSTREAM_BASE_URL: fakeBase,
        UPSTREAM_API_KEY: upstreamKey,
        UPSTREAM_MODEL_AGENT: 'fake-model',
        // Non-zero prices, so every request goes through the real credit arithmetic.
        UPSTREAM_PRICE_INPUT_PER_MTOK: '0.5',
        UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1.5',
      },
      `http://127.0.0.1:${port}/healthz`,
      20_000,
      false,
      dir,
    );
    children.push(t.proc);
    started = true;
    // The bootstrap account starts with a few credits (none at older commits): give it plenty through the admin API.
    const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    const list = (await (await fetch(`http://127.0.0.1:${port}/admin/v1/accounts`, { headers: admin })).json()) as { data?: { id: string; name: string }[] };
    const account = list.data?.find((a) => a.name === 'default') ?? list.data?.[0];
    if (!account) throw new Error(`no account to credit: ${JSON.stringify(list).slice(0, 200)}`);
    const res = await fetch(`http://127.0.0.1:${port}/admin/v1/accounts/${account.id}/credits`, {
      method: 'POST',
      headers: admin,
      // Under the balance cap (1,000,000,000 credits), above the starting credits.
      body: JSON.stringify({ amount: 999_000_000, reason: 'bench' }),
    });
    if (!res.ok) throw new Error(`adding credits: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  } catch (err) {
    if (!started) t.down = (err as Error).message;
    else console.error(`${t.name} setup: ${(err as Error).message} (its requests will likely fail)`);
  }
}

const fakePort = await freePort();
const fakeBase = `http://127.0.0.1:${fakePort}/v1`;
const databaseUrl = process.env.BENCH_DATABASE_URL ?? '';
const baselineDatabaseUrl = process.env.BENCH_BASELINE_DATABASE_URL ?? '';
if (base && databaseUrl && (!baselineDatabaseUrl || baselineDatabaseUrl === databaseUrl)) {
  // Two builds migrate their database differently: they cannot share one.
  console.error('bench:chat: with BENCH_DATABASE_URL and a baseline, set BENCH_BASELINE_DATABASE_URL to another (empty) database for the baseline');
  process.exit(2);
}
try {
  const apiPort = await freePort();
  const gwPort = await freePort();
  const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: 1 });

  const direct: Target = {
    name: 'direct',
    url: `${fakeBase}/chat/completions`,
    headers: { authorization: `Bearer ${upstreamKey}` },
    model: 'fake-model',
    agent: newAgent(),
  };
  const api: Target = {
    name: 'agent-api',
    url: `http://127.0.0.1:${apiPort}/v1/chat/completions`,
    headers: { authorization: `Bearer ${key}` },
    model: 'agent',
    agent: newAgent(),
  };
  const basePort = await freePort();
  const old: Target | undefined = base && {
    name: `agent-api ${base.label}`,
    url: `http://127.0.0.1:${basePort}/v1/chat/completions`,
    headers: { authorization: `Bearer ${key}` },
    model: 'agent',
    agent: newAgent(),
  };
  const portkey: Target = {
    name: 'Portkey',
    url: `http://127.0.0.1:${gwPort}/v1/chat/completions`,
    headers: { authorization: `Bearer ${upstreamKey}`, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': fakeBase },
    model: 'fake-model',
    agent: newAgent(),
  };
  targets.push(direct, api, ...(old ? [old] : []), portkey);

  // The fake upstream is required: without it nothing can be measured.
  children.push(await startChild([path.join(root, 'bench/fake-upstream.mjs')], { PORT: String(fakePort) }, `http://127.0.0.1:${fakePort}/`));

  await startApi(api, root, apiPort, databaseUrl);
  if (old && base) await startApi(old, base.dir, basePort, baselineDatabaseUrl);

  try {
    children.push(
      await startChild(
        [path.join(root, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${gwPort}`, '--headless'],
        { NODE_ENV: 'production' },
        `http://127.0.0.1:${gwPort}/`,
        20_000,
        true,
      ),
    );
    portkeyProcess = children.at(-1);
    portkey.proc = portkeyProcess;
  } catch (err) {
    portkey.down = (err as Error).message;
  }

  const up = targets.filter((t) => !t.down);

  console.log(`POST /v1/chat/completions via a zero-latency fake upstream; ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), all processes on this machine`);
  console.log(
    `node ${process.version}, @portkey-ai/gateway ${pkgVersion('@portkey-ai/gateway')} (@hono/node-server ${pkgVersion('@hono/node-server')}), autocannon ${pkgVersion('autocannon')}, agent-api database ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`,
  );
  console.log('Every target asks the fake for what the client asked (stream or one JSON answer).');

  // Smoke check: one request of each kind, so a broken target shows its answer.
  console.log('\nsmoke check (one request each):');
  for (const t of up) {
    const [a, b] = [await timed(t, false), await timed(t, true)];
    const show = (r: Timing) => (r.ok ? `ok ${r.status}` : `FAIL ${r.error}`);
    console.log(`  ${pad(t.name)} non-stream ${show(a)}; stream ${show(b)}`);
  }
  for (const t of targets.filter((x) => x.down)) console.log(`  ${pad(t.name)} DOWN: ${t.down}`);

  // Warm-up: JIT, connection pools, key cache.
  await throughput(up, false, warmSeconds, 1);
  await throughput(up, true, warmSeconds, 1);
  await new Promise((r) => setTimeout(r, 500));

  // 2. Concurrency 1, sub-ms.
  const seqPlain = await concurrencyOne(up, false);
  const seqStream = await concurrencyOne(up, true);

  // 1. Throughput.
  const rpsPlain = await throughput(up, false, seconds, rpsRounds);
  const rpsStream = streamRps ? await throughput(up, true, seconds, rpsRounds) : new Map<Target, Throughput>();

  const rpsHow = `${seconds} s per target in ${rpsRounds} interleaved slices`;
  console.log(`\nnon-streaming throughput (autocannon, ${connections} connections, ${rpsHow}, after ${warmSeconds} s warm-up; latency in whole ms):`);
  for (const t of targets) console.log(rpsRow(t, rpsPlain.get(t)));
  if (streamRps) {
    console.log(`\nstreaming throughput (stream:true + include_usage, ${connections} connections, ${rpsHow}; latency = whole stream):`);
    for (const t of targets) console.log(rpsRow(t, rpsStream.get(t)));
  }
  const c1How = `${c1Requests} sequential requests per target in ${c1Rounds} interleaved rounds, ${c1Warmup} untimed first in each; kept-alive connection`;
  console.log(`\nnon-streaming latency at concurrency 1 (${c1How}):`);
  for (const t of targets) console.log(seqRow(t, seqPlain.get(t), false));
  console.log(`\nstreaming at concurrency 1 (${c1How}; TTFB = first body bytes carrying a data: event):`);
  for (const t of targets) console.log(seqRow(t, seqStream.get(t), true));

  // 3. Ratios and deltas.
  const clean = (m: Map<Target, Throughput>, t: Target) => {
    const f = m.get(t);
    return f && f.errors + f.non2xx === 0 ? f : undefined;
  };
  const okSeq = (m: Map<Target, Sequential>, t: Target) => {
    const s = m.get(t);
    return s && s.failed === 0 ? s : undefined;
  };
  const ratio = (a?: Figures, b?: Figures) => (a && b ? `${(a.rps / b.rps).toFixed(2)}x (${a.rps.toFixed(0)} / ${b.rps.toFixed(0)} req/s)` : 'n/a (a target failed or is down)');
  const delta = (a?: number, b?: number) => (a !== undefined && b !== undefined ? signed(a - b) : 'n/a');

  console.log('\nsummary:');
  console.log(`  non-stream req/s   agent-api / Portkey: ${ratio(clean(rpsPlain, api), clean(rpsPlain, portkey))}`);
  console.log(`  non-stream req/s   agent-api / direct:  ${ratio(clean(rpsPlain, api), clean(rpsPlain, direct))}`);
  if (streamRps) {
    console.log(`  stream req/s       agent-api / Portkey: ${ratio(clean(rpsStream, api), clean(rpsStream, portkey))}`);
    console.log(`  stream req/s       agent-api / direct:  ${ratio(clean(rpsStream, api), clean(rpsStream, direct))}`);
  }
  const pA = okSeq(seqPlain, api)?.total;
  const pD = okSeq(seqPlain, direct)?.total;
  const pP = okSeq(seqPlain, portkey)?.total;
  const added = pA && pD ? pA.p50 - pD.p50 : undefined;
  const verdict = added === undefined ? '' : added < 1 ? '  (target < 1 ms: MET)' : '  (target < 1 ms: NOT MET)';
  console.log(`  non-stream c=1 added p50 over direct: agent-api ${delta(pA?.p50, pD?.p50)}${verdict}; Portkey ${delta(pP?.p50, pD?.p50)}`);
  console.log(`  non-stream c=1 added p99 over direct: agent-api ${delta(pA?.p99, pD?.p99)}; Portkey ${delta(pP?.p99, pD?.p99)}`);
  const sA = okSeq(seqStream, api);
  const sD = okSeq(seqStream, direct);
  const sP = okSeq(seqStream, portkey);
  for (const [label, pick] of [
    ['TTFB', (s: Sequential) => s.ttfb],
    ['first content', (s: Sequential) => s.firstContent],
    ['whole stream', (s: Sequential) => s.total],
  ] as const) {
    const [a, d, p] = [sA && pick(sA), sD && pick(sD), sP && pick(sP)];
    console.log(
      `  stream c=1 ${label.padEnd(13)} p50: agent-api ${delta(a?.p50, d?.p50)} over direct, Portkey ${delta(p?.p50, d?.p50)} over direct, agent-api ${delta(a?.p50, p?.p50)} vs Portkey` +
        `   | p99: agent-api ${delta(a?.p99, d?.p99)}, Portkey ${delta(p?.p99, d?.p99)} over direct`,
    );
  }
  if (old) {
    // This tree against the baseline build, from the same run.
    const cpuDelta = (a?: Throughput, b?: Throughput) =>
      a?.cpuUs !== undefined && b?.cpuUs !== undefined ? `${a.cpuUs.toFixed(0)} vs ${b.cpuUs.toFixed(0)} µs/req (${a.cpuUs - b.cpuUs >= 0 ? '+' : ''}${(a.cpuUs - b.cpuUs).toFixed(0)})` : 'n/a';
    const oA = okSeq(seqPlain, old)?.total;
    console.log(`\nthis tree vs ${old.name} (same run):`);
    console.log(`  non-stream req/s   ${ratio(clean(rpsPlain, api), clean(rpsPlain, old))}; server CPU ${cpuDelta(rpsPlain.get(api), rpsPlain.get(old))}`);
    if (streamRps) console.log(`  stream req/s       ${ratio(clean(rpsStream, api), clean(rpsStream, old))}; server CPU ${cpuDelta(rpsStream.get(api), rpsStream.get(old))}`);
    console.log(`  non-stream c=1 added p50 over direct: this tree ${delta(pA?.p50, pD?.p50)}, ${old.name} ${delta(oA?.p50, pD?.p50)}`);
    const [a, o, d] = [okSeq(seqStream, api)?.total, okSeq(seqStream, old)?.total, okSeq(seqStream, direct)?.total];
    console.log(`  stream c=1 whole stream added p50 over direct: this tree ${delta(a?.p50, d?.p50)}, ${old.name} ${delta(o?.p50, d?.p50)}`);
  }
  const noise = portkeyProcess && stderrLines.get(portkeyProcess);
  if (noise?.count) console.log(`\n(the Portkey gateway wrote ${noise.count} lines to stderr during the run, the first: ${noise.first})`);
  const failing = targets.filter((t) => t.down || !clean(rpsPlain, t) || !okSeq(seqPlain, t) || !okSeq(seqStream, t) || (streamRps && !clean(rpsStream, t)));
  if (failing.length) {
    console.log(`\nFAILING targets: ${failing.map((t) => t.name).join(', ')} (see the rows above)`);
    process.exitCode = 1;
  }
} finally {
  for (const t of targets) t.agent.destroy();
  await cleanup();
}
