// Senders for the large-body test and bench (a worker thread, so they do not share the
// server's event loop, nor the /healthz probe's: test/fuzz/healthz-worker.mjs): `clients`
// loops, each POSTing one ~9 MB JSON body again and again on its own keep-alive
// connection for `durationMs`. Plain JavaScript: a worker thread does not inherit the
// tsx loader.
// workerData: {origin, durationMs, clients: [{path, key, shape, invalid}]}
// Posts {type: 'ready'} once the bodies are built, then, when `{type: 'go'}` arrives and
// the time is up, {type: 'done', answers: [{status, count, first}] per client}.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const TARGET_BYTES = 9 * 1024 * 1024;

/**
 * The body of a shape, about 9 MB. `invalid`: refused by the contract only (a field's
 * value is wrong), after the whole body has been parsed.
 */
export function largeBody(shape, invalid) {
  const bad = invalid ? ',"temperature":"hot"' : '';
  switch (shape) {
    case 'huge-string': {
      const head = '{"model":"agent","messages":[{"role":"user","content":"';
      const tail = `"}]${bad}}`;
      return Buffer.from(head + 'x'.repeat(TARGET_BYTES - head.length - tail.length) + tail);
    }
    case 'many-messages': {
      // 20,000 messages, the most the contract takes.
      const n = 20_000;
      const text = 'hello world '.repeat(Math.floor((TARGET_BYTES / n - 40) / 12));
      const messages = Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: text }));
      return Buffer.from(JSON.stringify({ model: 'agent', messages }).slice(0, -1) + `${bad}}`);
    }
    case 'number-arrays': {
      // /v1/embeddings: 2,048 token arrays (the most it takes) of ~700 ids.
      const ids = Array.from({ length: 680 }, (_, i) => (i * 7919) % 200_000);
      const input = Array.from({ length: 2048 }, () => ids);
      return Buffer.from(JSON.stringify({ model: 'agent-embed', input, ...(invalid ? { dimensions: 0 } : {}) }));
    }
    case 'nested-numbers': {
      // Arrays of numbers 8 deep under a field that takes a map of strings: always refused.
      const leaf = Array.from({ length: 64 }, (_, i) => i * 1.5);
      let v = leaf;
      for (let d = 0; d < 7; d++) v = [v, v, v, v];
      const one = JSON.stringify(v);
      const copies = Math.max(1, Math.floor(TARGET_BYTES / one.length));
      return Buffer.from(`{"model":"agent","messages":[{"role":"user","content":"hi"}],"metadata":[${Array(copies).fill(one).join(',')}]}`);
    }
    default:
      throw new Error(`unknown shape ${shape}`);
  }
}

function post(agent, url, key, body) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const parts = [];
      res.on('data', (d) => parts.length < 4 && parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString().slice(0, 300) }));
      res.on('error', (err) => resolve({ status: 0, text: err.message }));
    });
    req.on('error', (err) => resolve({ status: 0, text: err.message }));
    req.end(body);
  });
}

async function main() {
  const { origin, durationMs, clients } = workerData;
  const bodies = new Map();
  for (const c of clients) {
    const id = `${c.shape}/${c.invalid}`;
    if (!bodies.has(id)) bodies.set(id, largeBody(c.shape, c.invalid));
  }
  await new Promise((resolve) => {
    parentPort.once('message', resolve);
    parentPort.postMessage({ type: 'ready' });
  });
  const until = performance.now() + durationMs;
  const answers = await Promise.all(
    clients.map(async (c) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const body = bodies.get(`${c.shape}/${c.invalid}`);
      const seen = new Map();
      while (performance.now() < until) {
        const r = await post(agent, origin + c.path, c.key, body);
        const s = seen.get(r.status) ?? { status: r.status, count: 0, first: r.text };
        s.count++;
        seen.set(r.status, s);
      }
      agent.destroy();
      return [...seen.values()];
    }),
  );
  await new Promise((r) => setTimeout(r, Math.max(0, until - performance.now())));
  parentPort.postMessage({ type: 'done', answers });
}

if (parentPort && workerData?.clients) main();
