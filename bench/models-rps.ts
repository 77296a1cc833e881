// Requests per second and p50/p99 latency of an authenticated GET /v1/models through
// the whole pipeline (auth, limits, activity log) against a bare node:http server
// answering the same JSON, in one run. Target: at least 40% of the bare server.
//
//   npm run bench:models            (BENCH_SECONDS, BENCH_CONNECTIONS to change the load)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, load, row, startChild, stopChild, serverArgs } from './lib.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-'));
const barePort = await freePort();
const apiPort = await freePort();
const bare = await startChild([path.join(root, 'bench/bare-server.mjs')], { PORT: String(barePort) }, `http://127.0.0.1:${barePort}/`);
const api = await startChild(
  serverArgs(root),
  {
    PORT: String(apiPort),
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
    AGENT_API_BOOTSTRAP_KEY: key,
    // The bench key must not be throttled by the service-wide per-minute ceiling.
    AGENT_API_MAX_RPM: '100000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  },
  `http://127.0.0.1:${apiPort}/healthz`,
);

try {
  const headers = { authorization: `Bearer ${key}` };
  // Warm up both (JIT, connection pools, the key cache).
  await load({ url: `http://127.0.0.1:${barePort}/v1/models`, duration: 2, connections });
  await load({ url: `http://127.0.0.1:${apiPort}/v1/models`, headers, duration: 2, connections });

  const bareFigures = await load({ url: `http://127.0.0.1:${barePort}/v1/models`, duration: seconds, connections });
  const apiFigures = await load({ url: `http://127.0.0.1:${apiPort}/v1/models`, headers, duration: seconds, connections });

  console.log(`GET /v1/models, ${connections} connections, ${seconds} s each, ${os.cpus().length} cores, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`);
  console.log(row('bare node:http (ceiling)', bareFigures));
  console.log(row('agent-api (auth, limits, activity)', apiFigures));
  const ratio = apiFigures.rps / bareFigures.rps;
  console.log(`ratio: ${(ratio * 100).toFixed(1)}% of the bare server's requests per second (target >= 40%)`);
} finally {
  await stopChild(api);
  await stopChild(bare);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
