// POST /v1/moderations on the offline engine, at concurrency 1, the server a child
// process: p50/p99 of a 1 KB text and of a list of 32 such texts, and the engine's own
// time for the 1 KB text (the rules alone, in this process), so the service's share shows.
// Images: the first image request's time (a worker started, the model loaded), then
// p50/p99 of one image (a 1024 x 768 JPEG drawn here, its size printed, as a data URL:
// decoded and classified on the image worker) and of a text with that image.
//
//   npm run bench:moderations   (BENCH_REQUESTS, default 500; BENCH_IMAGE_REQUESTS, default 200)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { scoreText } from '../src/providers/inline/moderation/text-scorer.ts';
import { freePort, percentile, startChild, stopChild, timedPost, serverArgs } from './lib.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 500);
const imageRequests = Number(process.env.BENCH_IMAGE_REQUESTS ?? 200);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const sentence = 'The committee met on Tuesday to review the budget, and after a long debate they agreed to fund the new library. ';
const kb = sentence.repeat(Math.ceil(1024 / sentence.length)).slice(0, 1024);

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const post = (port: number, body: unknown) => timedPost(port, '/v1/moderations', body, { agent, key });
const figures = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(3)} ms   p99 ${percentile(s, 99).toFixed(3)} ms`;
};

// A photo-like image: a gradient under coloured shapes, with noise so JPEG has work to do.
const noise = Buffer.alloc(1024 * 768 * 3);
for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
const photo = await sharp(noise, { raw: { width: 1024, height: 768, channels: 3 } })
  .composite([
    {
      input: Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="768"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#8ab"/><stop offset="1" stop-color="#553"/></linearGradient></defs>' +
          '<rect width="1024" height="768" fill="url(#g)" opacity="0.8"/><circle cx="300" cy="400" r="180" fill="#c96"/><rect x="600" y="150" width="300" height="450" fill="#468" opacity="0.9"/></svg>',
      ),
    },
  ])
  .jpeg({ quality: 85 })
  .toBuffer();
const imagePart = { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${photo.toString('base64')}` } };

const engine: number[] = [];
for (let i = 0; i < requests; i++) {
  const t0 = performance.now();
  await scoreText(kb);
  engine.push(performance.now() - t0);
}

const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-moderations-'));
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, AGENT_API_BOOTSTRAP_KEY: key, AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789', AGENT_API_BOOTSTRAP_CREDITS: '1000000', AGENT_API_MAX_RPM: '100000000', LOG_LEVEL: 'warn' },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
try {
  for (let i = 0; i < 50; i++) await post(port, { input: kb });
  const one: number[] = [];
  const list: number[] = [];
  for (let i = 0; i < requests; i++) {
    one.push(await post(port, { input: kb }));
    if (i % 4 === 0) list.push(await post(port, { input: Array.from({ length: 32 }, () => kb) }));
  }
  // Images: the first starts the image worker and loads the model (not at server start).
  const firstImage = await post(port, { input: [imagePart] });
  const image: number[] = [];
  const textAndImage: number[] = [];
  for (let i = 0; i < 10; i++) await post(port, { input: [imagePart] });
  for (let i = 0; i < imageRequests; i++) {
    image.push(await post(port, { input: [imagePart] }));
    if (i % 4 === 0) textAndImage.push(await post(port, { input: [{ type: 'text', text: kb }, imagePart] }));
  }
  console.log(`moderations, offline engine, concurrency 1 (${os.cpus().length} cores)`);
  console.log(`  the rules alone, 1 KB text            ${figures(engine)}`);
  console.log(`  POST /v1/moderations, 1 KB text       ${figures(one)}`);
  console.log(`  POST /v1/moderations, 32 x 1 KB       ${figures(list)}`);
  console.log(`  first image (worker start, model load) ${firstImage.toFixed(0)} ms`);
  console.log(`  POST /v1/moderations, 1 image (${Math.round(photo.length / 1024)} KB JPEG, 1024 x 768)  ${figures(image)}`);
  console.log(`  POST /v1/moderations, 1 KB text + image  ${figures(textAndImage)}`);
} finally {
  await stopChild(api);
  agent.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
