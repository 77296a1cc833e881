// Worker threads that run the parsers of structured files (parsers.ts). An uploaded
// file is hostile: pdf.js, mammoth or html-to-text could spin on it or swell. On a
// worker thread that costs neither the event loop nor the server's heap: each worker
// has a heap limit (running out ends the worker, not the process), each file a time
// limit (the worker is terminated), and the caller's signal terminates it too.
// A heap limit does not cover ArrayBuffers, and pdf.js inflates a stream whole into
// one (a 1 MB PDF can hold a stream of gigabytes), so while files are parsed this
// thread also watches the process's resident memory and terminates the workers when it
// has grown past a budget. A few workers are kept, each parsing one file at a time; an
// idle one ends after a while.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DocumentError, type DocumentErrorCode } from './document-error.ts';
import type { ParseJob } from './parsers.ts';

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'done'; text: string }
  | { type: 'refused'; code: DocumentErrorCode; message: string };

export interface SandboxOptions {
  /** Workers at most, each parsing one file at a time; more files wait. */
  maxWorkers: number;
  /** The most a file may take; then its worker is terminated and the file refused. */
  timeoutMs: number;
  /** Each worker's heap (V8 old generation), in MB. */
  heapMb: number;
  /** How much the process's resident memory may grow while files are parsed, in MB. */
  memoryBudgetMb: number;
  /** An idle worker ends after this long. */
  idleMs: number;
}

export const SANDBOX_DEFAULTS: SandboxOptions = { maxWorkers: 2, timeoutMs: 60_000, heapMb: 768, memoryBudgetMb: 1536, idleMs: 30_000 };

/** How often resident memory is looked at while files are parsed. */
const WATCH_MS = 50;

// The entry beside this module, with its extension: .ts from the sources (loaded
// through tsx, registered in the worker), .js once built.
const SELF = fileURLToPath(import.meta.url);
const ENTRY = new URL(`./extract-worker${path.extname(SELF)}`, import.meta.url).href;
const TSX = path.extname(SELF) === '.ts' ? import.meta.resolve('tsx/esm/api') : null;
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();
`;

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  busy: boolean;
  idleTimer?: NodeJS.Timeout;
  /** Set while a file is parsed: ends that parse (the memory watch). */
  overBudget?: () => void;
}

export class Sandbox {
  private readonly options: SandboxOptions;
  private readonly slots = new Set<Slot>();
  private readonly waiting: { take(slot: Slot): void; fail(err: Error): void }[] = [];
  private closed = false;
  private watch?: NodeJS.Timeout;

  constructor(options: Partial<SandboxOptions> = {}) {
    this.options = { ...SANDBOX_DEFAULTS, ...options };
  }

  /**
   * The raw text of the file, or the DocumentError its parser raised (also for a file
   * that takes too long or needs too much memory). Rejects with the signal's reason when
   * it is aborted, and with a plain Error when a worker cannot start at all.
   */
  async parse(job: ParseJob, signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    const slot = await this.acquire(signal);
    if (signal?.aborted) {
      this.release(slot);
      throw signal.reason;
    }
    return new Promise<string>((resolve, reject) => {
      const { worker } = slot;
      const settle = (healthy: boolean, outcome: () => void) => {
        slot.overBudget = undefined;
        this.watchMemory();
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (healthy) this.release(slot);
        else this.retire(slot);
        outcome();
      };
      const refuse = (detail: string, cause?: unknown) => DocumentError.about('invalid_file', job.filename, detail, cause);
      const onMessage = (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          slot.ready = true;
        } else if (reply.type === 'done') {
          settle(true, () => resolve(reply.text));
        } else {
          settle(true, () => reject(new DocumentError(reply.code, reply.message)));
        }
      };
      const onError = (err: Error & { code?: string }) => {
        settle(false, () => {
          if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') reject(refuse(`needs more than the ${this.options.heapMb} MB of memory a file may take to read.`, err));
          else if (!slot.ready) reject(new Error(`the document parser's worker did not start: ${err.message}`, { cause: err }));
          else reject(refuse(`could not be read: the parser failed (${err.message.slice(0, 200)}).`, err));
        });
      };
      const onExit = (code: number) => settle(false, () => reject(refuse(`could not be read: the parser stopped (exit code ${code}).`)));
      const onAbort = () => settle(false, () => reject(signal!.reason));
      const limit = this.options.timeoutMs;
      const timer = setTimeout(
        () => settle(false, () => reject(refuse(`took longer than ${limit < 1000 ? `${limit} ms` : `${Math.round(limit / 1000)} s`} to read, the most a file may take.`))),
        limit,
      );
      slot.overBudget = () => settle(false, () => reject(refuse(`needs more memory than a file may take to read (the parser grew past ${this.options.memoryBudgetMb} MB).`)));
      this.watchMemory();
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      signal?.addEventListener('abort', onAbort, { once: true });
      // One exact copy of the bytes, moved to the worker (cloning a view would copy the
      // whole buffer beneath it).
      const bytes = new Uint8Array(job.bytes);
      worker.postMessage({ ...job, bytes } satisfies ParseJob, [bytes.buffer]);
    });
  }

  /**
   * Starts the memory watch when a parse begins on an idle sandbox (from the resident
   * memory then), stops it when none is left. Over the budget, every parse in progress
   * ends: which worker grew cannot be told from outside.
   */
  private watchMemory(): void {
    const parsing = [...this.slots].some((s) => s.overBudget);
    if (!parsing) {
      clearInterval(this.watch);
      this.watch = undefined;
      return;
    }
    if (this.watch) return;
    const baseline = process.memoryUsage.rss();
    const budget = this.options.memoryBudgetMb * 1024 * 1024;
    this.watch = setInterval(() => {
      if (process.memoryUsage.rss() - baseline <= budget) return;
      for (const slot of this.slots) slot.overBudget?.();
    }, WATCH_MS).unref();
  }

  /** Ends every worker (parses in progress fail, waiting ones too). */
  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.fail(new Error('the document sandbox is closed'));
    await Promise.all([...this.slots].map((s) => s.worker.terminate()));
  }

  private acquire(signal?: AbortSignal): Promise<Slot> {
    if (this.closed) return Promise.reject(new Error('the document sandbox is closed'));
    for (const slot of this.slots) {
      if (!slot.busy) {
        this.take(slot);
        return Promise.resolve(slot);
      }
    }
    if (this.slots.size < this.options.maxWorkers) {
      const slot = this.spawn();
      this.take(slot);
      return Promise.resolve(slot);
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter = {
        take: (slot: Slot) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(slot);
        },
        fail: (err: Error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private spawn(): Slot {
    const worker = new Worker(BOOT, {
      eval: true,
      execArgv: [],
      workerData: { entry: ENTRY, tsx: TSX },
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
    });
    const slot: Slot = { worker, ready: false, busy: false };
    this.slots.add(slot);
    // Without a listener an 'error' event would throw in this thread; a parse in
    // progress has its own listeners and reports it.
    worker.on('error', () => {});
    worker.on('message', (reply: WorkerReply) => {
      if (reply.type === 'ready') slot.ready = true;
    });
    worker.once('exit', () => this.retire(slot));
    return slot;
  }

  /** Ends a worker and forgets it at once, so no parse is handed a worker on its way out. */
  private retire(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    if (!this.slots.delete(slot)) return;
    void slot.worker.terminate();
    this.serveWaiting();
  }

  private take(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    slot.busy = true;
    slot.worker.ref();
  }

  private release(slot: Slot): void {
    if (this.closed) return this.retire(slot);
    slot.busy = false;
    slot.worker.unref();
    slot.idleTimer = setTimeout(() => this.retire(slot), this.options.idleMs).unref();
    this.serveWaiting();
  }

  /** Hands idle or new workers to waiting parses. */
  private serveWaiting(): void {
    while (this.waiting.length > 0 && !this.closed) {
      let slot = [...this.slots].find((s) => !s.busy);
      if (!slot && this.slots.size < this.options.maxWorkers) slot = this.spawn();
      if (!slot) return;
      this.take(slot);
      this.waiting.shift()!.take(slot);
    }
  }
}
