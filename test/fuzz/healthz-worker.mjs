// Polls GET /healthz of the server under test every `pollMs` from a worker thread, whose
// own event loop keeps the figures free of the fuzzer's work, and posts every sample.
// A poll starts on the clock, not after the previous one: a slow answer does not slow
// the polling down (up to MAX_OPEN polls at once, each on its own connection).
// Plain JavaScript: a worker thread does not inherit the tsx loader.
// Messages in: {type: 'port', port} (start, or a restarted child), {type: 'pause'},
// {type: 'stop'}. Messages out: {type: 'sample', at, ms, ok, error?}.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const POLL_MS = workerData.pollMs;
/** A poll unanswered this long counts as failed (the figure recorded is the wait). */
const GIVE_UP_MS = 2_000;
const MAX_OPEN = Math.ceil(GIVE_UP_MS / POLL_MS) + 1;

let port = 0;
let paused = true;
let open = 0;
let agent = new http.Agent({ keepAlive: true, maxSockets: MAX_OPEN });

parentPort.on('message', (msg) => {
  if (msg.type === 'port') {
    agent.destroy();
    agent = new http.Agent({ keepAlive: true, maxSockets: MAX_OPEN });
    port = msg.port;
    paused = false;
  } else if (msg.type === 'pause') paused = true;
  else if (msg.type === 'stop') {
    paused = true;
    clearInterval(timer);
    agent.destroy();
  }
});

function pollOnce() {
  const started = performance.now();
  const at = performance.timeOrigin + started;
  const forPort = port;
  let done = false;
  open++;
  const report = (ok, error) => {
    if (done) return;
    done = true;
    open--;
    clearTimeout(giveUp);
    // Samples of a server being restarted on purpose say nothing.
    if (!paused && forPort === port) parentPort.postMessage({ type: 'sample', at, ms: performance.now() - started, ok, ...(error ? { error } : {}) });
  };
  const req = http.get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
    res.resume();
    res.on('end', () => report(res.statusCode === 200, res.statusCode === 200 ? undefined : `status ${res.statusCode}`));
    res.on('error', (err) => report(false, err.message));
  });
  req.on('error', (err) => report(false, err.message));
  const giveUp = setTimeout(() => {
    report(false, 'no answer');
    req.destroy();
  }, GIVE_UP_MS);
}

const timer = setInterval(() => {
  if (!paused && port && open < MAX_OPEN) pollOnce();
}, POLL_MS);
