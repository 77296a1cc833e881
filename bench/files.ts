// Upload and download throughput of a 20 MB file through /v1/files with the official
// openai SDK (multipart parsing, the blob store's hash and flushed write, the row; the
// download streams the blob), against agent-api in a child process. Each figure is the
// median of BENCH_ROUNDS rounds, one request at a time.
//
//   npm run bench:files        (BENCH_ROUNDS, BENCH_MB; BENCH_DATABASE_URL=postgres://… for PostgreSQL)
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { freePort, startChild, stopChild, serverArgs } from './lib.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const megabytes = Number(process.env.BENCH_MB ?? 20);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-files-'));
const port = await freePort();
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '', AGENT_API_BOOTSTRAP_KEY: key, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  `http://127.0.0.1:${port}/healthz`,
);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  const content = randomBytes(megabytes * 1024 * 1024);
  const up: number[] = [];
  const down: number[] = [];
  for (let i = 0; i <= rounds; i++) {
    const file = await toFile(content, 'bench.bin');
    let t = performance.now();
    const created = await client.files.create({ file, purpose: 'user_data' });
    const upMs = performance.now() - t;
    t = performance.now();
    const bytes = Buffer.from(await (await client.files.content(created.id)).arrayBuffer());
    const downMs = performance.now() - t;
    if (!bytes.equals(content)) throw new Error('the download differs from the upload');
    await client.files.delete(created.id);
    // Round 0 warms up (JIT, connections).
    if (i === 0) continue;
    up.push(megabytes / (upMs / 1000));
    down.push(megabytes / (downMs / 1000));
  }
  console.log(`/v1/files, a ${megabytes} MB file, openai SDK, ${rounds} rounds, ${os.cpus().length} cores, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}, blobs on ${dataDir}`);
  console.log(`upload    median ${median(up).toFixed(0).padStart(5)} MB/s   (min ${Math.min(...up).toFixed(0)}, max ${Math.max(...up).toFixed(0)})`);
  console.log(`download  median ${median(down).toFixed(0).padStart(5)} MB/s   (min ${Math.min(...down).toFixed(0)}, max ${Math.max(...down).toFixed(0)})`);
} finally {
  await stopChild(api);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
