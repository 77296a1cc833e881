// Polls GET /healthz of the server under test every `pollMs` from a worker thread, whose
// own event loop keeps the figures free of the fuzzer's work, and posts every sample.
// Plain JavaScript: a worker thread does not inherit the tsx loader.
// Messages in: {type: 'port', port} (start, or a restarted child), {type: 'pause'},
// {type: 'stop'}. Messages out: {type: 'sample', at, ms, ok, error?}.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const POLL_MS = workerData.pollMs;
/** A poll unanswered this long counts as failed (the figure recorded is the wait). */
const GIVE_UP_MS = 2_000;

let port = 0;
let paused = true;
let stopped = false;
let agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

parentPort.on('message', (msg) => {
  if (msg.type === 'port') {
    agent.destroy();
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    port = msg.port;
    paused = false;
  } else if (msg.type === 'pause') paused = true;
  else if (msg.type === 'stop') {
    stopped = true;
    agent.destroy();
  }
});

function pollOnce() {
  return new Promise((resolve) => {
    const started = performance.now();
    const at = performance.timeOrigin + started;
    let done = false;
    const report = (ok, error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!paused && !stopped) parentPort.postMessage({ type: 'sample', at, ms: performance.now() - started, ok, ...(error ? { error } : {}) });
      resolve();
    };
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
      res.resume();
      res.on('end', () => report(res.statusCode === 200, res.statusCode === 200 ? undefined : `status ${res.statusCode}`));
      res.on('error', (err) => report(false, err.message));
    });
    req.on('error', (err) => report(false, err.message));
    const timer = setTimeout(() => {
      report(false, 'no answer');
      req.destroy();
    }, GIVE_UP_MS);
  });
}

while (!stopped) {
  const started = performance.now();
  if (!paused && port) await pollOnce();
  const wait = POLL_MS - (performance.now() - started);
  await new Promise((r) => setTimeout(r, Math.max(1, wait)));
}
