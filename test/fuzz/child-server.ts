// The server under test, as its own process: the fuzz suite must observe a real exit, and
// the /healthz poller must measure this process's event loop, not the fuzzer's.
// Reads its database from FUZZ_DATABASE_URL, listens on an ephemeral port and prints
// one line `{"port": N}` on stdout. Adds one debug route, /__fuzz/probe (outside the
// contract, so it is neither fuzzed nor published), that reports whether
// Object.prototype was polluted.
import { Worker } from 'node:worker_threads';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

// A hung server cannot notice that the fuzzer is gone (a test timeout kills it): a
// thread of its own does, and ends the process, so no orphan keeps burning CPU.
new Worker(
  `const { workerData } = require('node:worker_threads');
   setInterval(() => { if (process.ppid !== workerData.ppid) process.kill(process.pid, 'SIGKILL'); }, 500);`,
  { eval: true, workerData: { ppid: process.ppid } },
).unref();

const env = process.env;
const url = env.FUZZ_DATABASE_URL;
if (!url) throw new Error('FUZZ_DATABASE_URL is not set');

// What Object.prototype looked like at start: anything added, removed or replaced later
// is pollution.
const original = new Map(Object.getOwnPropertyNames(Object.prototype).map((n) => [n, Object.getOwnPropertyDescriptor(Object.prototype, n)]));
const same = (a: PropertyDescriptor | undefined, b: PropertyDescriptor | undefined) => a?.value === b?.value && a?.get === b?.get && a?.set === b?.set;

const config = loadConfig({ ...env, DATABASE_URL: url, HOST: '127.0.0.1', PORT: '0' });
const app = await createApp(config, {
  routes: (router) => {
    router.app.get('/__fuzz/probe', async () => {
      const names = Object.getOwnPropertyNames(Object.prototype);
      const inherited: string[] = [];
      // for-in over a fresh object lists every enumerable inherited key.
      for (const k in {}) inherited.push(k);
      return {
        added: names.filter((n) => !original.has(n)),
        removed: [...original.keys()].filter((n) => !names.includes(n)),
        changed: names.filter((n) => original.has(n) && !same(original.get(n), Object.getOwnPropertyDescriptor(Object.prototype, n))),
        inherited,
      };
    });
  },
});
await app.http.listen({ host: '127.0.0.1', port: 0 });
const address = app.http.server.address();
if (typeof address !== 'object' || address === null) throw new Error('no address');
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);

// The parent stops us with SIGTERM; a clean close flushes the activity log.
process.once('SIGTERM', () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
