// Where log lines go when no test stream is given: stdout, written asynchronously in
// batches. One access line per request written on its own would cost a thread-pool
// round trip each (a futex wake-up of a pool thread and an eventfd wake-up back, which
// on a small virtual machine often costs the event loop its time slice); batched, the
// lines of many requests go in one write, and a quiet server still writes within the
// flush interval.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { LOG_FLUSH_MS, logDestination } from './server.ts';

const line = (i: number) =>
  `{"level":30,"time":1767225600000,"pid":1,"hostname":"h","request_id":"req_${String(i).padStart(24, '0')}","method":"POST","route":"/v1/chat/completions","status":200,"latency_ms":3,"key_id":"key_0123456789abcdef","msg":"request"}\n`;

test('lines written a request apart go out in a few batched writes, each within the flush interval', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'out.log');
  const original = fs.write;
  let writes = 0;
  (fs as { write: unknown }).write = (...args: unknown[]) => {
    writes++;
    return (original as (...a: unknown[]) => unknown)(...args);
  };
  t.after(() => ((fs as { write: unknown }).write = original));
  const dest = logDestination(file);
  await new Promise((resolve) => dest.once('ready', resolve));
  const n = 200;
  for (let i = 0; i < n; i++) {
    dest.write(line(i));
    // A request's worth of time between lines: each line's own write would have finished.
    await sleep(1);
  }
  // One write per 4 KB (about 18 lines here) and one per flush interval, not one per line.
  assert.ok(writes < n / 5, `${writes} writes for ${n} lines`);
  await sleep(LOG_FLUSH_MS * 3);
  assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length, n, 'every line reached the file');

  // A lone line on a quiet server is not held back.
  dest.write(line(n));
  await sleep(LOG_FLUSH_MS * 3);
  assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length, n + 1);
  dest.destroy();
});
