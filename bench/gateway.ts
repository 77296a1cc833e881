// The gateway root (/api/gateway/v1, docs/gateway.md) over a zero-latency fake
// OpenRouter-shaped aggregator on loopback (bench/fake-upstream.mjs, its /api/v1), in one
// run: (a) direct to the fake, (b) through agent-api's gateway (key with the AI gateway
// switch, limits, reservation at the fake's /models prices, the byte-for-byte pass-through
// with the usage tee, settlement to the reported `usage.cost`, activity log), and (c)
// through the Portkey gateway (@portkey-ai/gateway, provider openrouter) pointed at the
// same fake. Measures, as bench/chat.ts does:
//   1. non-streaming req/s and p50/p99 (autocannon, BENCH_CONNECTIONS, BENCH_SECONDS per
//      target cut into BENCH_RPS_ROUNDS slices the targets take in turn), with each
//      server's CPU time per request (/proc, Linux); the same streamed unless
//      BENCH_STREAM_RPS=0;
//   2. at concurrency 1 with sub-ms precision (node:http + performance.now()), in
//      interleaved rounds: the non-streaming latency, and a stream's time to first byte
//      (the first body bytes carrying a `data:` event) and to its end;
//   3. the gateway's added p50 over direct (target: under 1 ms) at both concurrencies,
//      its added TTFB, the ratios to Portkey, and what the account was charged against
//      the fake's reported cost (the cost flow ran, not only the forwarding).
// A target that fails to start or answers non-2xx is reported as such, not fatal.
//
//   npm run bench:gateway   (BENCH_SECONDS, BENCH_RPS_ROUNDS, BENCH_CONNECTIONS,
//                            BENCH_C1_REQUESTS, BENCH_C1_ROUNDS, BENCH_C1_WARMUP,
//                            BENCH_STREAM_RPS, BENCH_DATABASE_URL, LOG_LEVEL,
//                            BENCH_NODE_FLAGS: node/V8 flags for agent-api, e.g.
//                            --cpu-prof --cpu-prof-dir=/tmp/prof)
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type autocannon from 'autocannon';
import { freePort, loadRaw, percentile, processCpuMs, serverArgs, startChild, stderrLines, stopAll, sumRounds, type Figures } from './lib.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const c1Requests = Number(process.env.BENCH_C1_REQUESTS ?? 400);
const c1Warmup = Number(process.env.BENCH_C1_WARMUP ?? 10);
const c1Rounds = Number(process.env.BENCH_C1_ROUNDS ?? 8);
const rpsRounds = Math.max(1, Number(process.env.BENCH_RPS_ROUNDS ?? 5));
const streamRps = process.env.BENCH_STREAM_RPS !== '0';
const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
const warmSeconds = 2;
const root = path.resolve(import.meta.dirname, '..');
const adminToken = 'agent-bench-admin-0123456789abcdef';
const upstreamKey = 'sk-or-fake-upstream-key';
const model = 'bench/fake-model';
// What the fake reports per call (bench/fake-upstream.mjs: 12 prompt and 10 completion tokens at its /models prices).
const fakeCostUsd = 12 * 0.0000005 + 10 * 0.0000015;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  down?: string;
  agent: http.Agent;
  /** The target's own server process (its CPU time is read per request); not for direct, whose fake is shared. */
  proc?: ChildProcess;
}

const children: ChildProcess[] = [];
const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-gateway-'));
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

const pkgVersion = (name: string): string => {
  try {
    return JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version as string;
  } catch {
    return 'not installed';
  }
};

const messages = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Say hello in one short sentence.' },
];
// The same bytes to every target: what an OpenRouter client sends.
const bodies = { plain: JSON.stringify({ model, messages }), stream: JSON.stringify({ model, messages, stream: true }) };
const bodyFor = (stream: boolean) => (stream ? bodies.stream : bodies.plain);

// --- one timed request over a kept-alive connection ---------------------------------

interface Timing {
  ok: boolean;
  status: number;
  /** ms to the first body bytes carrying a `data:` event (streams), or to the first body byte */
  ttfb: number;
  /** ms to the end of the response */
  total: number;
  error?: string;
}

function timed(t: Target, stream: boolean): Promise<Timing> {
  const body = bodyFor(stream);
  const u = new URL(t.url);
  return new Promise((resolve) => {
    let ttfb = NaN;
    let text = '';
    const start = performance.now();
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: t.agent,
        headers: { ...t.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (Number.isNaN(ttfb) && (!stream || text.includes('data:'))) ttfb = performance.now() - start;
        });
        res.on('end', () => {
          const total = performance.now() - start;
          const status = res.statusCode ?? 0;
          let ok = status >= 200 && status < 300;
          let error: string | undefined;
          if (!ok) error = `HTTP ${status}: ${text.slice(0, 300)}`;
          else if (stream && !/data: ?\[DONE\]/.test(text)) [ok, error] = [false, `stream without [DONE]: ${text.slice(0, 300)}`];
          else if (stream && !/"cost":/.test(text)) [ok, error] = [false, `stream without the usage chunk's cost: ${text.slice(0, 300)}`];
          else if (!stream) {
            try {
              if (typeof JSON.parse(text).choices?.[0]?.message?.content !== 'string') [ok, error] = [false, `no message content: ${text.slice(0, 300)}`];
            } catch {
              [ok, error] = [false, `not JSON: ${text.slice(0, 300)}`];
            }
          }
          resolve({ ok, status, ttfb, total, error });
        });
        res.on('error', (err) => resolve({ ok: false, status: res.statusCode ?? 0, ttfb, total: NaN, error: err.message }));
      },
    );
    req.on('error', (err) => resolve({ ok: false, status: 0, ttfb, total: NaN, error: err.message }));
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
  total: Dist;
}

const dist = (xs: number[]): Dist => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};

/**
 * Concurrency 1, in rounds: each round gives every target a block of sequential requests
 * (after `c1Warmup` untimed ones) in turn, so drift of a shared machine biases none.
 */
async function concurrencyOne(up: Target[], stream: boolean): Promise<Map<Target, Sequential>> {
  const runs = new Map(up.map((t) => [t, [] as Timing[]]));
  const block = Math.max(1, Math.ceil(c1Requests / c1Rounds));
  for (let round = 0; round < c1Rounds; round++) {
    for (const t of up) {
      for (let i = 0; i < c1Warmup; i++) await timed(t, stream);
      for (let i = 0; i < block; i++) runs.get(t)!.push(await timed(t, stream));
    }
  }
  return new Map(
    up.map((t) => {
      const all = runs.get(t)!;
      const good = all.filter((r) => r.ok);
      return [t, { n: all.length, failed: all.length - good.length, firstError: all.find((r) => !r.ok)?.error, ttfb: dist(good.map((r) => r.ttfb)), total: dist(good.map((r) => r.total)) }];
    }),
  );
}

interface Throughput extends Figures {
  /** The target server's CPU time per completed request, in µs (undefined: not measured). */
  cpuUs?: number;
  ok: number;
}

/** BENCH_SECONDS per target in `rounds` slices, the targets taking turns slice by slice. */
async function throughput(up: Target[], stream: boolean, duration: number, rounds: number): Promise<Map<Target, Throughput>> {
  const slices = new Map(up.map((t) => [t, [] as autocannon.Result[]]));
  const cpu = new Map(up.map((t) => [t, 0]));
  for (let round = 0; round < rounds; round++) {
    for (const t of up) {
      const before = processCpuMs(t.proc?.pid);
      slices.get(t)!.push(await loadRaw({ url: t.url, method: 'POST', body: bodyFor(stream), headers: { ...t.headers, 'content-type': 'application/json' }, duration: duration / rounds, connections }));
      const after = processCpuMs(t.proc?.pid);
      cpu.set(t, before === undefined || after === undefined ? NaN : cpu.get(t)! + after - before);
    }
  }
  return new Map(
    up.map((t) => {
      const raw = slices.get(t)! as unknown as { totalCompletedRequests: number; '2xx': number }[];
      const done = raw.reduce((n, r) => n + r.totalCompletedRequests, 0);
      const ms = cpu.get(t)!;
      return [t, { ...sumRounds(slices.get(t)!), ok: raw.reduce((n, r) => n + r['2xx'], 0), cpuUs: t.proc && Number.isFinite(ms) && done > 0 ? (ms * 1000) / done : undefined }];
    }),
  );
}

// --- formatting ---------------------------------------------------------------------

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(3)} ms` : 'n/a');
const signed = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(3)} ms` : 'n/a');
const pad = (s: string) => s.padEnd(12);

function rpsRow(t: Target, f: Throughput | undefined): string {
  if (!f) return `  ${pad(t.name)} not measured: ${t.down}`;
  const bad = f.errors + f.non2xx > 0 ? `   <-- FAILING: ${f.non2xx} non-2xx, ${f.errors} errors/timeouts` : '';
  const cpu = f.cpuUs === undefined ? '' : `   server CPU ${f.cpuUs.toFixed(0).padStart(4)} µs/req`;
  return `  ${pad(t.name)} ${f.rps.toFixed(0).padStart(7)} req/s   p50 ${String(f.p50).padStart(3)} ms   p99 ${String(f.p99).padStart(3)} ms${cpu}   non-2xx ${f.non2xx}  errors ${f.errors}${bad}`;
}

function seqRow(t: Target, s: Sequential | undefined, stream: boolean): string {
  if (!s) return `  ${pad(t.name)} not measured: ${t.down}`;
  if (s.failed === s.n) return `  ${pad(t.name)} all ${s.n} requests failed: ${s.firstError}`;
  const fail = s.failed > 0 ? `   <-- FAILING: ${s.failed}/${s.n} failed, first: ${s.firstError}` : '';
  if (!stream) return `  ${pad(t.name)} latency p50 ${ms(s.total.p50)}  p99 ${ms(s.total.p99)}${fail}`;
  return `  ${pad(t.name)} TTFB p50 ${ms(s.ttfb.p50)}  p99 ${ms(s.ttfb.p99)}   whole stream p50 ${ms(s.total.p50)}  p99 ${ms(s.total.p99)}${fail}`;
}

// --- run ----------------------------------------------------------------------------

const targets: Target[] = [];
let gatewayKey = '';

/** Starts agent-api with the gateway pointed at the fake; an account with plenty of credits and a key with only the AI gateway switch. */
async function startApi(t: Target, port: number, upstreamUrl: string): Promise<void> {
  let started = false;
  try {
    t.proc = await startChild(
      [...nodeFlags, ...serverArgs(root)],
      {
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: fs.mkdtempSync(path.join(dataRoot, 'api-')),
        DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        AGENT_API_ADMIN_TOKEN: adminToken,
        // A first start without it prints a new key to the console; the bench makes its own below.
        AGENT_API_BOOTSTRAP_KEY: 'sk-agent-bench-unused-0123456789abcdef',
        AGENT_API_BOOTSTRAP_CREDITS: '0',
        // The bench key must not be throttled by the per-minute ceiling or the account's concurrency.
        AGENT_API_MAX_RPM: '100000000',
        AGENT_API_ACCOUNT_CONCURRENCY: '1000',
        GATEWAY_UPSTREAM_URL: upstreamUrl,
        GATEWAY_UPSTREAM_KEY: upstreamKey,
      },
      `http://127.0.0.1:${port}/healthz`,
      60_000,
      false,
      root,
    );
    children.push(t.proc);
    started = true;
    const admin = async <T>(urlPath: string, body: unknown): Promise<T> => {
      const res = await fetch(`http://127.0.0.1:${port}/admin/v1${urlPath}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`POST /admin/v1${urlPath}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
      return (await res.json()) as T;
    };
    // Under the balance cap (1,000,000,000 credits): millions of calls at the fake's cost.
    const account = await admin<{ id: string }>('/accounts', { name: 'bench-gateway', credits: 999_000_000 });
    gatewayKey = (await admin<{ key: string }>('/keys', { account_id: account.id, name: 'bench-gateway', permissions: { ai_gateway: true } })).key;
    t.headers = { authorization: `Bearer ${gatewayKey}` };
  } catch (err) {
    if (!started) t.down = (err as Error).message;
    else console.error(`${t.name} setup: ${(err as Error).message} (its requests will fail)`);
  }
}

const fakePort = await freePort();
const fakeApi = `http://127.0.0.1:${fakePort}/api/v1`;
try {
  const apiPort = await freePort();
  const pkPort = await freePort();
  const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: 1 });
  const direct: Target = { name: 'direct', url: `${fakeApi}/chat/completions`, headers: { authorization: `Bearer ${upstreamKey}` }, agent: newAgent() };
  const gateway: Target = { name: 'gateway', url: `http://127.0.0.1:${apiPort}/api/gateway/v1/chat/completions`, headers: {}, agent: newAgent() };
  // Portkey's openrouter provider appends /v1/chat/completions to the custom host.
  const portkey: Target = {
    name: 'Portkey',
    url: `http://127.0.0.1:${pkPort}/v1/chat/completions`,
    headers: { authorization: `Bearer ${upstreamKey}`, 'x-portkey-provider': 'openrouter', 'x-portkey-custom-host': `http://127.0.0.1:${fakePort}/api` },
    agent: newAgent(),
  };
  targets.push(direct, gateway, portkey);

  // The fake is required: without it nothing can be measured.
  children.push(await startChild([path.join(root, 'bench/fake-upstream.mjs')], { PORT: String(fakePort) }, `http://127.0.0.1:${fakePort}/`));
  await startApi(gateway, apiPort, fakeApi);
  try {
    portkey.proc = await startChild(
      [path.join(root, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${pkPort}`, '--headless'],
      { NODE_ENV: 'production' },
      `http://127.0.0.1:${pkPort}/`,
      20_000,
      true,
    );
    children.push(portkey.proc);
  } catch (err) {
    portkey.down = (err as Error).message;
  }
  const up = targets.filter((t) => !t.down);

  const load = os.loadavg().map((l) => l.toFixed(2));
  console.log(`POST /chat/completions (OpenRouter-shaped) via a zero-latency fake aggregator; ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), load average ${load.join(' ')} at start, all processes on this machine`);
  console.log(
    `node ${process.version}, @portkey-ai/gateway ${pkgVersion('@portkey-ai/gateway')} (@hono/node-server ${pkgVersion('@hono/node-server')}), autocannon ${pkgVersion('autocannon')}, agent-api database ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, LOG_LEVEL ${process.env.LOG_LEVEL ?? 'info'}`,
  );

  console.log('\nsmoke check (one request each):');
  for (const t of up) {
    const [a, b] = [await timed(t, false), await timed(t, true)];
    const show = (r: Timing) => (r.ok ? `ok ${r.status}` : `FAIL ${r.error}`);
    console.log(`  ${pad(t.name)} non-stream ${show(a)}; stream ${show(b)}`);
  }
  for (const t of targets.filter((x) => x.down)) console.log(`  ${pad(t.name)} DOWN: ${t.down}`);

  // Warm-up: JIT, connection pools, the key cache, the gateway's /models prices.
  const warm = [await throughput(up, false, warmSeconds, 1), await throughput(up, true, warmSeconds, 1)];
  await new Promise((r) => setTimeout(r, 500));

  const seqPlain = await concurrencyOne(up, false);
  const seqStream = await concurrencyOne(up, true);
  const rpsPlain = await throughput(up, false, seconds, rpsRounds);
  const rpsStream = streamRps ? await throughput(up, true, seconds, rpsRounds) : new Map<Target, Throughput>();

  const rpsHow = `${seconds} s per target in ${rpsRounds} interleaved slices`;
  console.log(`\nnon-streaming throughput (autocannon, ${connections} connections, ${rpsHow}, after ${warmSeconds} s warm-up; latency in whole ms):`);
  for (const t of targets) console.log(rpsRow(t, rpsPlain.get(t)));
  if (streamRps) {
    console.log(`\nstreaming throughput (${connections} connections, ${rpsHow}; latency = whole stream):`);
    for (const t of targets) console.log(rpsRow(t, rpsStream.get(t)));
  }
  const c1How = `${c1Requests} sequential requests per target in ${c1Rounds} interleaved rounds, ${c1Warmup} untimed first in each; kept-alive connection`;
  console.log(`\nnon-streaming latency at concurrency 1 (${c1How}):`);
  for (const t of targets) console.log(seqRow(t, seqPlain.get(t), false));
  console.log(`\nstreaming at concurrency 1 (${c1How}; TTFB = first body bytes carrying a data: event):`);
  for (const t of targets) console.log(seqRow(t, seqStream.get(t), true));

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
  const verdict = (added?: number) => (added === undefined || !Number.isFinite(added) ? '' : added < 1 ? ' (target < 1 ms: MET)' : ' (target < 1 ms: NOT MET)');
  const wholeMs = (a?: Figures, b?: Figures) => (a && b ? `${a.p50 - b.p50 >= 0 ? '+' : ''}${a.p50 - b.p50} ms` : 'n/a');

  console.log('\nsummary:');
  console.log(`  non-stream req/s  gateway / direct:  ${ratio(clean(rpsPlain, gateway), clean(rpsPlain, direct))}`);
  console.log(`  non-stream req/s  gateway / Portkey: ${ratio(clean(rpsPlain, gateway), clean(rpsPlain, portkey))}`);
  if (streamRps) {
    console.log(`  stream req/s      gateway / direct:  ${ratio(clean(rpsStream, gateway), clean(rpsStream, direct))}`);
    console.log(`  stream req/s      gateway / Portkey: ${ratio(clean(rpsStream, gateway), clean(rpsStream, portkey))}`);
  }
  console.log(
    `  non-stream added p50 at ${connections} connections (whole ms): gateway ${wholeMs(clean(rpsPlain, gateway), clean(rpsPlain, direct))}, Portkey ${wholeMs(clean(rpsPlain, portkey), clean(rpsPlain, direct))}`,
  );
  const [pG, pD, pP] = [okSeq(seqPlain, gateway)?.total, okSeq(seqPlain, direct)?.total, okSeq(seqPlain, portkey)?.total];
  console.log(`  non-stream c=1 added p50 over direct: gateway ${delta(pG?.p50, pD?.p50)}${verdict(pG && pD && pG.p50 - pD.p50)}; Portkey ${delta(pP?.p50, pD?.p50)}`);
  console.log(`  non-stream c=1 added p99 over direct: gateway ${delta(pG?.p99, pD?.p99)}; Portkey ${delta(pP?.p99, pD?.p99)}`);
  const [sG, sD, sP] = [okSeq(seqStream, gateway), okSeq(seqStream, direct), okSeq(seqStream, portkey)];
  console.log(`  stream c=1 TTFB added p50 over direct: gateway ${delta(sG?.ttfb.p50, sD?.ttfb.p50)}${verdict(sG && sD && sG.ttfb.p50 - sD.ttfb.p50)}; Portkey ${delta(sP?.ttfb.p50, sD?.ttfb.p50)}`);
  console.log(`  stream c=1 TTFB added p99 over direct: gateway ${delta(sG?.ttfb.p99, sD?.ttfb.p99)}; Portkey ${delta(sP?.ttfb.p99, sD?.ttfb.p99)}`);
  console.log(`  stream c=1 whole stream added p50 over direct: gateway ${delta(sG?.total.p50, sD?.total.p50)}; Portkey ${delta(sP?.total.p50, sD?.total.p50)}`);

  // The cost flow ran: the account was charged the fake's reported cost per call (calls autocannon cut at a slice's end settle on price).
  if (!gateway.down && gatewayKey) {
    try {
      const res = await fetch(`http://127.0.0.1:${apiPort}/api/gateway/v1/credits`, { headers: { authorization: `Bearer ${gatewayKey}` } });
      const usage = ((await res.json()) as { data?: { total_usage?: number } }).data?.total_usage;
      // Smoke (2), warm-up, c=1 (warm-up included) and measured calls answered 2xx.
      const block = Math.max(1, Math.ceil(c1Requests / c1Rounds));
      const answered = 2 + 2 * c1Rounds * (c1Warmup + block) + [...warm, rpsPlain, rpsStream].reduce((n, m) => n + (m.get(gateway)?.ok ?? 0), 0);
      console.log(
        `  charged: $${usage?.toFixed(6)} = ${usage === undefined ? 'n/a' : (usage / fakeCostUsd).toFixed(1)} calls at the fake's reported $${fakeCostUsd.toFixed(6)}; ${answered} calls answered 2xx (autocannon also cuts up to ${connections} calls at the end of each slice, which the gateway may have forwarded and charged)`,
      );
    } catch (err) {
      console.log(`  charged: could not read /credits: ${(err as Error).message}`);
    }
  }
  console.log(`  load average at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const noise = portkey.proc && stderrLines.get(portkey.proc);
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
