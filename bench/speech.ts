// POST /v1/audio/speech on the offline engine (Flite on worker threads), at concurrency
// 1, the server a child process: p50/p99 of the first byte of the audio and of the whole
// answer for an input of 400 characters (six sentences), as mp3 and as pcm, and the
// audio's length, so the time per second of speech shows.
//
//   npm run bench:speech   (BENCH_REQUESTS, default 40 per format)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, percentile, startChild, stopChild, serverArgs } from './lib.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 40);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const text =
  'Your order has shipped and should arrive on Thursday. The courier will call before delivery. ' +
  'If nobody is home, the parcel goes to the nearest pickup point. You can change the address until tomorrow noon. ' +
  'Reply to this message with any question. Thank you for shopping with us, and have a pleasant week ahead of you.';
const input = text.slice(0, 400).padEnd(400, '.');

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request: ms to the first byte of the body, ms to its end, and its bytes. */
function timedSpeech(port: number, body: unknown): Promise<{ first: number; total: number; bytes: number }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    let bytes = 0;
    const req = http.request(
      { host: '127.0.0.1', port, path: '/v1/audio/speech', method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`status ${res.statusCode}`));
        }
        res.on('data', (chunk: Buffer) => {
          if (bytes === 0) first = performance.now() - t0;
          bytes += chunk.length;
        });
        res.on('end', () => resolve({ first, total: performance.now() - t0, bytes }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const figures = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1).padStart(7)} ms   p99 ${percentile(s, 99).toFixed(1).padStart(7)} ms`;
};

const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-speech-'));
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, AGENT_API_BOOTSTRAP_KEY: key, AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789', AGENT_API_BOOTSTRAP_CREDITS: '1000000', AGENT_API_MAX_RPM: '100000000', LOG_LEVEL: 'warn' },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
try {
  console.log(`speech, offline engine, ${input.length} characters, concurrency 1 (${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)})`);
  for (const format of ['mp3', 'pcm'] as const) {
    const body = { model: 'agent-voice', input, voice: 'eve', response_format: format };
    // Warm-up: the workers start, the JIT settles (lamejs is slow until it has).
    for (let i = 0; i < 10; i++) await timedSpeech(port, body);
    const first: number[] = [];
    const total: number[] = [];
    let bytes = 0;
    for (let i = 0; i < requests; i++) {
      const r = await timedSpeech(port, body);
      first.push(r.first);
      total.push(r.total);
      bytes = r.bytes;
    }
    const audio = format === 'pcm' ? `${(bytes / 48_000).toFixed(1)} s of audio` : `${(bytes / 1024).toFixed(0)} KiB`;
    console.log(`  ${format}  first byte  ${figures(first)}`);
    console.log(`  ${format}  whole       ${figures(total)}   (${audio})`);
  }
} finally {
  await stopChild(api);
  agent.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
