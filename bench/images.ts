// POST /v1/images/generations and /v1/images/edits on the offline engine, at concurrency 1,
// the server a child process: p50/p99 of a 1024 x 1024 generation (standard and max
// quality: max draws the most texture), of an edit of a 1024 x 768 JPEG to 1024 x 1024
// (recoloured, objects drawn over), and the engine's own time for the generation (the
// drawing and resvg alone, in this process), so the service's share shows. Prompts vary
// per request (the same request gives the same bytes, but nothing here is cached anyway).
//
//   npm run bench:images   (BENCH_REQUESTS, default 100)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { createOfflineImages } from '../src/providers/inline/images/offline-images.ts';
import { freePort, percentile, startChild, stopChild, timedPost, serverArgs } from './lib.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 100);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const prompt = (i: number) => `${['three', 'two', 'five', 'a'][i % 4]} red balloons and a yellow sun over a house with trees ${['at sunset', 'at night', 'on a beach', 'in a forest'][i % 4]} #${i}`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const figures = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1)} ms   p99 ${percentile(s, 99).toFixed(1)} ms`;
};

/** A multipart POST of an edit; the milliseconds until the whole answer came. */
function timedEdit(port: number, image: Buffer, fields: Record<string, string>): Promise<number> {
  const boundary = '----bench-images-boundary';
  const head = Object.entries(fields)
    .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  const body = Buffer.concat([Buffer.from(`${head}--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="photo.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`), image, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { host: '127.0.0.1', port, path: '/v1/images/edits', method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// A photo-like 1024 x 768 JPEG: noise under a gradient and shapes.
const noise = Buffer.alloc(1024 * 768 * 3);
for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
const photo = await sharp(noise, { raw: { width: 1024, height: 768, channels: 3 } })
  .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="768"><rect width="1024" height="768" fill="#8ab" opacity="0.8"/><circle cx="300" cy="400" r="180" fill="#c96"/></svg>') }])
  .jpeg({ quality: 85 })
  .toBuffer();

const engine = createOfflineImages();
const own: number[] = [];
const signal = new AbortController().signal;
for (let i = 0; i < requests; i++) {
  const t0 = performance.now();
  await engine.create({ operation: 'generation', prompt: prompt(i), size: { width: 1024, height: 1024 }, quality: 'standard', fields: {} }, signal);
  own.push(performance.now() - t0);
}

const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-images-'));
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, AGENT_API_BOOTSTRAP_KEY: key, AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789', AGENT_API_BOOTSTRAP_CREDITS: '1000000', AGENT_API_MAX_RPM: '100000000', LOG_LEVEL: 'warn' },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
try {
  const generate = (i: number, quality: string) => timedPost(port, '/v1/images/generations', { prompt: prompt(i), size: '1024x1024', quality }, { agent, key });
  for (let i = 0; i < 5; i++) {
    await generate(i, 'standard');
    await timedEdit(port, photo, { prompt: prompt(i), size: '1024x1024' });
  }
  const standard: number[] = [];
  const max: number[] = [];
  const edit: number[] = [];
  for (let i = 0; i < requests; i++) {
    standard.push(await generate(i, 'standard'));
    if (i % 2 === 0) max.push(await generate(i, 'max'));
    edit.push(await timedEdit(port, photo, { prompt: `make it ${['purple', 'orange', 'teal', 'pink'][i % 4]} with two white clouds #${i}`, size: '1024x1024' }));
  }
  console.log(`images, offline engine, concurrency 1 (${os.cpus().length} cores)`);
  console.log(`  the engine alone, 1024 x 1024 generation        ${figures(own)}`);
  console.log(`  POST /v1/images/generations 1024 x 1024 standard ${figures(standard)}`);
  console.log(`  POST /v1/images/generations 1024 x 1024 max      ${figures(max)}`);
  console.log(`  POST /v1/images/edits (${Math.round(photo.length / 1024)} KB JPEG 1024 x 768 to 1024 x 1024)  ${figures(edit)}`);
} finally {
  await stopChild(api);
  agent.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
