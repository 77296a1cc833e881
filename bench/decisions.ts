// POST /v1/decisions on the offline engine, at concurrency 1, the server a child
// process: p50/p99 of a request of 32 mixed questions (predicates, choices of 4, scores
// of 5 levels) about a 1 KB text, and of one predicate; and the engine's own time for
// the 32 questions (in this process), so the service's share shows.
//
//   npm run bench:decisions   (BENCH_REQUESTS, default 500)
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createOfflineDecisions } from '../src/providers/inline/decision/offline-decisions.ts';
import type { DecisionQuestion } from '../src/providers/types.ts';
import { freePort, percentile, startChild, stopChild, timedPost, serverArgs } from './lib.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 500);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const sentence = 'My order arrived two days late and the box was crushed, so I would like a refund or a replacement soon. ';
const kb = sentence.repeat(Math.ceil(1024 / sentence.length)).slice(0, 1024);

const kinds: DecisionQuestion[] = [
  { name: 'p', type: 'predicate', instructions: 'The order arrived late' },
  {
    name: 'c',
    type: 'choice',
    instructions: 'What does the customer want?',
    choices: [
      { value: 'refund', description: 'their money back' },
      { value: 'replacement', description: 'a new item instead' },
      { value: 'information', description: 'details about a product or an order' },
      { value: 'cancellation', description: 'to cancel an order or a subscription' },
    ],
  },
  {
    name: 's',
    type: 'score',
    instructions: 'How upset is the customer?',
    levels: [
      { label: 'calm', description: 'no complaint at all' },
      { label: 'mild', description: 'a small inconvenience' },
      { label: 'annoyed', description: 'late or damaged, wants it fixed' },
      { label: 'angry', description: 'demands a refund now' },
      { label: 'furious', description: 'threatens to leave and complain publicly' },
    ],
  },
];
const questions = Array.from({ length: 32 }, (_, i) => ({ ...kinds[i % kinds.length]!, name: `q${i}` }));

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const post = (port: number, body: unknown) => timedPost(port, '/v1/decisions', body, { agent, key });
const figures = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(3)} ms   p99 ${percentile(s, 99).toFixed(3)} ms`;
};

const offline = createOfflineDecisions();
const engine: number[] = [];
const signal = new AbortController().signal;
for (let i = 0; i < requests; i++) {
  const t0 = performance.now();
  await offline.decide({ model: 'typesafe/jev-1.14', messages: [[{ type: 'text', text: kb }]], questions }, signal);
  engine.push(performance.now() - t0);
}

const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-decisions-'));
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, AGENT_API_BOOTSTRAP_KEY: key, AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789', AGENT_API_BOOTSTRAP_CREDITS: '1000000', AGENT_API_MAX_RPM: '100000000', LOG_LEVEL: 'warn' },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
try {
  for (let i = 0; i < 50; i++) await post(port, { input: kb, questions });
  const many: number[] = [];
  const one: number[] = [];
  for (let i = 0; i < requests; i++) {
    many.push(await post(port, { input: kb, questions }));
    one.push(await post(port, { input: kb, questions: [kinds[0]] }));
  }
  console.log(`decisions, offline engine, concurrency 1 (${os.cpus().length} cores)`);
  console.log(`  the engine alone, 32 questions, 1 KB     ${figures(engine)}`);
  console.log(`  POST /v1/decisions, 32 questions, 1 KB   ${figures(many)}`);
  console.log(`  POST /v1/decisions, 1 predicate, 1 KB    ${figures(one)}`);
} finally {
  await stopChild(api);
  agent.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
