// Batch throughput against the same requests sent live at the same concurrency, side by
// side: N chat lines as one batch (from create to `completed`, output file written) vs.
// N POSTs through the openai SDK with AGENT_API_BATCH_CONCURRENCY in flight. Twice: on
// the offline engine, and against the zero-latency fake upstream (bench/fake-upstream.mjs).
//
//   npm run bench:batch     (BENCH_LINES, default 2000; BENCH_DATABASE_URL=postgres://… for PostgreSQL)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { freePort, startChild, stopAll, stopChild, serverArgs } from './lib.ts';

const lines = Number(process.env.BENCH_LINES ?? 2000);
const concurrency = 4;
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const adminToken = 'bench-admin-token-0123456789';

interface Figures {
  batchLinesPerSec: number;
  liveReqPerSec: number;
}

async function measure(upstream: string | undefined): Promise<Figures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-batch-'));
  const port = await freePort();
  const api = await startChild(
    serverArgs(root),
    {
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: process.env.BENCH_DATABASE_URL ?? '',
      AGENT_API_BOOTSTRAP_KEY: key,
      AGENT_API_ADMIN_TOKEN: adminToken,
      AGENT_API_BOOTSTRAP_CREDITS: '1000000',
      AGENT_API_MAX_RPM: '100000000',
      // Above the in-flight count: a finished call's slot is freed just after its answer.
      AGENT_API_ACCOUNT_CONCURRENCY: String(concurrency * 4),
      AGENT_API_BATCH_CONCURRENCY: String(concurrency),
      AGENT_API_JOBS_POLL_MS: '50',
      LOG_LEVEL: 'warn',
      ...(upstream ? { UPSTREAM_BASE_URL: upstream, UPSTREAM_MODEL_AGENT: 'fake-model', UPSTREAM_PRICE_INPUT_PER_MTOK: '0.5', UPSTREAM_PRICE_OUTPUT_PER_MTOK: '1.5' } : {}),
    },
    `http://127.0.0.1:${port}/healthz`,
    20_000,
  );
  try {
    const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const bodies = Array.from({ length: lines }, (_, i) => ({ model: 'agent', messages: [{ role: 'user' as const, content: `What is ${i} + 1?` }], max_tokens: 32 }));

    // Live first (it also warms the process up), `concurrency` in flight.
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < bodies.length) await client.chat.completions.create(bodies[next++]!);
      }),
    );
    const liveMs = performance.now() - t0;

    const jsonl = bodies.map((body, i) => JSON.stringify({ custom_id: `l-${i}`, method: 'POST', url: '/v1/chat/completions', body })).join('\n');
    const file = await client.files.create({ file: await toFile(Buffer.from(jsonl), 'bench.jsonl'), purpose: 'batch' });
    const t1 = performance.now();
    let batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    while (!['completed', 'failed', 'cancelled', 'expired'].includes(batch.status)) {
      await new Promise((r) => setTimeout(r, 20));
      batch = await client.batches.retrieve(batch.id);
    }
    const batchMs = performance.now() - t1;
    if (batch.status !== 'completed' || batch.request_counts?.completed !== lines) {
      throw new Error(`the batch ended ${batch.status} with ${JSON.stringify(batch.request_counts)} ${JSON.stringify(batch.errors)}`);
    }
    return { batchLinesPerSec: lines / (batchMs / 1000), liveReqPerSec: lines / (liveMs / 1000) };
  } finally {
    await stopChild(api);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fakePort = await freePort();
const fake = await startChild([path.join(root, 'bench/fake-upstream.mjs')], { PORT: String(fakePort) }, `http://127.0.0.1:${fakePort}/`);
try {
  const offline = await measure(undefined);
  const upstream = await measure(`http://127.0.0.1:${fakePort}/v1`);
  console.log(`${lines} chat requests, ${concurrency} in flight, ${os.cpus().length} cores, ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`);
  console.log('                          batch (create → completed)    live (POSTs, openai SDK)   batch / live');
  for (const [name, f] of [
    ['offline engine', offline],
    ['zero-latency upstream', upstream],
  ] as const) {
    console.log(`  ${name.padEnd(24)} ${f.batchLinesPerSec.toFixed(0).padStart(8)} lines/s             ${f.liveReqPerSec.toFixed(0).padStart(8)} req/s           ${(f.batchLinesPerSec / f.liveReqPerSec).toFixed(2)}x`);
  }
} finally {
  await stopAll([fake]);
}
