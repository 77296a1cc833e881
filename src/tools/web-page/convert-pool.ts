// The workers that convert HTML (and large text bodies) to text for the page reader
// (read-page.ts); this module is also their entry. Why workers: html-to-text is far too
// slow for the event loop. Measured on this project's
// 2-core machine: 1 MiB of ordinary markup takes 250-350 ms; 1 MiB of nested elements
// 10-40 s (htmlparser2 unshifts each open element onto an array: quadratic in depth);
// with html-to-text's table layout a 1 MiB table took 9-39 s (tables are read row by row
// here instead, linear). Even 64 KiB of markup takes 20-40 ms and 128 KiB of nested tags
// 130-160 ms, so no input cap both reads real pages and keeps the worst case to tens of
// ms: HTML is converted on worker threads, each conversion with a time limit (the worker
// is terminated past it, as html-to-text cannot be interrupted) and each worker with a
// heap limit. Before conversion, comments and script, style and svg elements are cut out
// in one linear pass (they are most of a modern page's bytes), and at most
// MAX_HTML_CHARS of what is left are converted, in two stages so a long page whose first
// part already fills `maxChars` costs only that part (page-text.ts). A text body over
// 64 KiB comes here too (a legacy charset decodes at about 10 ms a MiB).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { convertPage, PageFailed, type ConvertJob, type Page } from './page-text.ts';

/** Workers converting HTML at once (more pages wait); an idle one ends after a while. */
const MAX_WORKERS = 2;
const WORKER_IDLE_MS = 30_000;
/** Each worker's heap: converting 1 MiB of hostile HTML was measured at 60-160 MB. */
const WORKER_HEAP_MB = 256;
/** Starting a worker (loading this module, through tsx from the sources) may take this long. */
const WORKER_START_MS = 30_000;

// --- The workers

type WorkerReply = { type: 'ready' } | { type: 'done'; title: string | null; text: string; truncated: boolean } | { type: 'failed'; message: string };

const ROLE = 'read-page';
const SELF = fileURLToPath(import.meta.url);
// This module is the worker's entry too; from the sources it is loaded through tsx,
// registered in the worker (as the document sandbox does).
const TSX = path.extname(SELF) === '.ts' ? import.meta.resolve('tsx/esm/api') : null;
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();
`;

if (!isMainThread && parentPort && (workerData as { role?: unknown } | null)?.role === ROLE) {
  const port = parentPort;
  // html-to-text warns on the console about input it cuts; that is expected here.
  console.warn = () => {};
  port.on('message', (job: ConvertJob) => {
    let reply: WorkerReply;
    try {
      reply = { type: 'done', ...convertPage(job) };
    } catch (err) {
      const message = err instanceof PageFailed ? err.message : `The page could not be converted to text: ${err instanceof RangeError ? 'it is too large or nested too deeply' : 'the converter failed'}.`;
      reply = { type: 'failed', message };
    }
    port.postMessage(reply);
  });
  port.postMessage({ type: 'ready' } satisfies WorkerReply);
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
  idleTimer?: NodeJS.Timeout;
}

const slots = new Set<Slot>();
const waiting: ((slot: Slot) => void)[] = [];

function spawn(): Slot {
  const worker = new Worker(BOOT, {
    eval: true,
    execArgv: [],
    workerData: { role: ROLE, entry: import.meta.url, tsx: TSX },
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the worker did not start in time')), WORKER_START_MS);
    const done = (err?: Error) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', done);
      worker.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const onMessage = (reply: WorkerReply) => reply.type === 'ready' && done();
    const onExit = (code: number) => done(new Error(`the worker exited with code ${code}`));
    worker.on('message', onMessage);
    worker.on('error', done);
    worker.on('exit', onExit);
  });
  ready.catch(() => {}); // awaited by the conversion that took the slot
  const slot: Slot = { worker, ready, busy: false };
  slots.add(slot);
  // Without a listener an 'error' event would throw on this thread; a conversion in
  // progress listens itself and reports it.
  worker.on('error', () => {});
  worker.once('exit', () => retire(slot));
  return slot;
}

function acquire(signal: AbortSignal | undefined): Promise<Slot> {
  let slot = [...slots].find((s) => !s.busy);
  if (!slot && slots.size < MAX_WORKERS) slot = spawn();
  if (slot) {
    take(slot);
    return Promise.resolve(slot);
  }
  return new Promise<Slot>((resolve, reject) => {
    const waiter = (s: Slot) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(s);
    };
    const onAbort = () => {
      const at = waiting.indexOf(waiter);
      if (at !== -1) waiting.splice(at, 1);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    waiting.push(waiter);
  });
}

function take(slot: Slot): void {
  clearTimeout(slot.idleTimer);
  slot.busy = true;
  // Referenced while it works, so a conversion keeps the process alive; not when idle.
  slot.worker.ref();
}

function release(slot: Slot): void {
  slot.busy = false;
  slot.worker.unref();
  slot.idleTimer = setTimeout(() => retire(slot), WORKER_IDLE_MS).unref();
  serveWaiting();
}

/** Ends a worker (one that overran or failed, or idle too long) and forgets it at once. */
function retire(slot: Slot): void {
  clearTimeout(slot.idleTimer);
  if (!slots.delete(slot)) return;
  void slot.worker.terminate();
  serveWaiting();
}

function serveWaiting(): void {
  while (waiting.length > 0) {
    let slot = [...slots].find((s) => !s.busy);
    if (!slot && slots.size < MAX_WORKERS) slot = spawn();
    if (!slot) return;
    take(slot);
    waiting.shift()!(slot);
  }
}

export async function convertOnWorker(job: ConvertJob, timeoutMs: number, signal: AbortSignal | undefined): Promise<Omit<Page, 'url'>> {
  const slot = await acquire(signal);
  try {
    await slot.ready;
  } catch {
    retire(slot);
    throw new PageFailed('The page could not be converted to text: the converter did not start.');
  }
  if (signal?.aborted) {
    release(slot);
    throw signal.reason;
  }
  return new Promise((resolve, reject) => {
    const { worker } = slot;
    const settle = (healthy: boolean, outcome: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (healthy) release(slot);
      else retire(slot);
      outcome();
    };
    const onMessage = (reply: WorkerReply) => {
      if (reply.type === 'done') settle(true, () => resolve({ title: reply.title, text: reply.text, truncated: reply.truncated }));
      else if (reply.type === 'failed') settle(true, () => reject(new PageFailed(reply.message)));
    };
    const onError = (err: Error & { code?: string }) =>
      settle(false, () =>
        reject(new PageFailed(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'The page is too complex to convert to text: it needs too much memory.' : 'The page could not be converted to text: the converter failed.')),
      );
    const onExit = () => settle(false, () => reject(new PageFailed('The page could not be converted to text: the converter stopped.')));
    const onAbort = () => settle(false, () => reject(signal!.reason));
    // An overrun worker is terminated: html-to-text cannot be interrupted otherwise.
    const timer = setTimeout(
      () => settle(false, () => reject(new PageFailed(`The page is too complex to convert to text (it took longer than ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 100) / 10} s`}).`))),
      timeoutMs,
    );
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    signal?.addEventListener('abort', onAbort, { once: true });
    // One exact copy, moved to the worker (cloning a Buffer's view would copy its whole pool).
    const bytes = new Uint8Array(job.bytes);
    worker.postMessage({ ...job, bytes } satisfies ConvertJob, [bytes.buffer]);
  });
}

