// POST /v1/embeddings on the built-in embedder (no upstream), against agent-api in a
// child process: requests per second and p50/p99 latency (autocannon, BENCH_CONNECTIONS
// at once, BENCH_SECONDS each) for one string, for 100 strings, and for 100 strings
// with encoding_format base64 (what the openai SDK asks for by default), on
// text-embedding-3-small (1536 values a vector). Every request goes the whole way:
// auth, contract, limits, token count, credits held and settled, the activity log.
//
//   npm run bench:embeddings   (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_DATABASE_URL=postgres://… for PostgreSQL)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, load, row, startChild, stopChild, serverArgs } from './lib.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';

const sentence = (i: number) => `Sentence ${i}: the quick brown fox jumps over the lazy dog while markets in Europe close ${i % 7} points higher.`;
const cases = [
  ['one string', { model: 'text-embedding-3-small', input: sentence(0), encoding_format: 'float' }],
  ['100 strings', { model: 'text-embedding-3-small', input: Array.from({ length: 100 }, (_, i) => sentence(i)), encoding_format: 'float' }],
  ['100 strings, base64', { model: 'text-embedding-3-small', input: Array.from({ length: 100 }, (_, i) => sentence(i)), encoding_format: 'base64' }],
] as const;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-embed-'));
const port = await freePort();
const api = await startChild(
  serverArgs(root),
  {
    PORT: String(port),
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    AGENT_API_BOOTSTRAP_KEY: key,
    AGENT_API_BOOTSTRAP_CREDITS: '1000000',
    AGENT_API_MAX_RPM: '100000000',
    AGENT_API_ACCOUNT_CONCURRENCY: '1000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    // The built-in embedder whatever the environment says.
    UPSTREAM_BASE_URL: '',
  },
  `http://127.0.0.1:${port}/healthz`,
);

try {
  const url = `http://127.0.0.1:${port}/v1/embeddings`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  console.log(`POST /v1/embeddings, built-in embedder, ${connections} connections, ${seconds} s each, ${os.cpus().length} cores, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`);
  for (const [name, body] of cases) {
    const payload = JSON.stringify(body);
    const check = await fetch(url, { method: 'POST', headers, body: payload });
    if (check.status !== 200) throw new Error(`${name}: ${check.status} ${await check.text()}`);
    const bytes = (await check.arrayBuffer()).byteLength;
    // Warm up (JIT, the key cache), then measure.
    await load({ url, method: 'POST', headers, body: payload, duration: 2, connections });
    const figures = await load({ url, method: 'POST', headers, body: payload, duration: seconds, connections });
    const inputs = Array.isArray(body.input) ? body.input.length : 1;
    console.log(`${row(name, figures)}   ${(figures.rps * inputs).toFixed(0)} inputs/s, ${(bytes / 1024).toFixed(0)} KB an answer`);
  }
} finally {
  await stopChild(api);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
