// The worker threads of the offline speech engine (flite-worker.ts), of one kind (Flite
// voices, or MP3 encoders). A few workers, each working on one piece at a time; more pieces wait in a queue bounded in count (past
// it, 503: the engine is busy); each piece has a time limit, past which its worker is
// terminated (a WebAssembly synthesis cannot be interrupted) and another started when
// needed; an idle worker ends after a while. Each worker has a temp directory of its own
// for Flite's output file, removed when it ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../../../errors.ts';
import type { FliteWorkerData, SynthJob, SynthReply } from './flite-worker.ts';

export interface FlitePoolOptions {
  /** What its workers do: read text aloud (`flite`) or encode MP3 (`mp3`). */
  kind: 'flite' | 'mp3';
  /** flite.wasm's path. */
  wasm: string;
  /** Workers at most. */
  workers: number;
  /** Pieces that may wait for a worker; one past it is refused (503). */
  maxWaiting: number;
  /** One piece's time limit. */
  pieceTimeoutMs: number;
  /** An idle worker ends after this long. */
  idleMs: number;
}

// The entry beside this module, with its extension: .ts from the sources (loaded
// through tsx, registered in the worker), .js once built.
const SELF = fileURLToPath(import.meta.url);
const ENTRY = new URL(`./flite-worker${path.extname(SELF)}`, import.meta.url).href;
const TSX = path.extname(SELF) === '.ts' ? import.meta.resolve('tsx/esm/api') : null;
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();
`;
/** Starting a worker (tsx, compiling 21 MB of WebAssembly) may take this long on a busy machine. */
const START_MS = 60_000;

export interface Synthesized {
  bytes: Uint8Array;
  /** Samples at 24 kHz. */
  samples: number;
}

/** A job without its id (the pool numbers them). */
export type PieceJob = SynthJob extends infer J ? (J extends SynthJob ? Omit<J, 'id'> : never) : never;

interface Pending {
  job: PieceJob;
  signal: AbortSignal;
  resolve(v: Synthesized): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  dir: string;
  ready: boolean;
  current: (Pending & { id: number; timer: NodeJS.Timeout }) | null;
  idleTimer?: NodeJS.Timeout;
}

export class FlitePool {
  private readonly slots = new Set<Slot>();
  private readonly waiting: Pending[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: FlitePoolOptions) {}

  /** Pieces waiting for a worker now. */
  get queued(): number {
    return this.waiting.length;
  }

  run(job: PieceJob, signal: AbortSignal): Promise<Synthesized> {
    if (this.closed) return Promise.reject(serviceUnavailable('The service is shutting down.'));
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.waiting.length >= this.options.maxWaiting) {
      return Promise.reject(serviceUnavailable('The offline speech engine is busy with other requests; try again shortly.'));
    }
    return new Promise<Synthesized>((resolve, reject) => {
      const pending: Pending = { job, signal, resolve, reject };
      const onAbort = () => {
        const at = this.waiting.indexOf(pending);
        if (at !== -1) {
          this.waiting.splice(at, 1);
          reject(signal.reason);
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const done = <T>(f: (v: T) => void) => (v: T) => {
        signal.removeEventListener('abort', onAbort);
        f(v);
      };
      pending.resolve = done(resolve);
      pending.reject = done(reject);
      this.waiting.push(pending);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let slot = [...this.slots].find((s) => s.ready && s.current === null);
      if (!slot) {
        // Workers still starting take the queue when ready; start another if there is room.
        const starting = [...this.slots].filter((s) => !s.ready).length;
        if (this.slots.size < this.options.workers && starting < this.waiting.length) this.spawn();
        return;
      }
      const pending = this.waiting.shift()!;
      if (pending.signal.aborted) continue;
      this.start(slot, pending);
      slot = undefined;
    }
  }

  private start(slot: Slot, pending: Pending): void {
    clearTimeout(slot.idleTimer);
    const id = this.nextId++;
    const timer = setTimeout(() => {
      // Cannot be interrupted: the worker goes, the piece fails.
      this.retire(slot, new Error(`the offline speech engine did not finish a piece within ${this.options.pieceTimeoutMs} ms`));
    }, this.options.pieceTimeoutMs);
    slot.current = { ...pending, id, timer };
    slot.worker.ref();
    const job = { ...pending.job, id } as SynthJob;
    slot.worker.postMessage(job, job.kind === 'mp3' ? [job.pcm] : []);
  }

  private spawn(): void {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-speech-'));
    const worker = new Worker(BOOT, {
      eval: true,
      execArgv: [],
      workerData: { role: 'speech', kind: this.options.kind, entry: ENTRY, tsx: TSX, wasm: this.options.wasm, dir } satisfies FliteWorkerData,
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const slot: Slot = { worker, dir, ready: false, current: null };
    this.slots.add(slot);
    const startTimer = setTimeout(() => this.retire(slot, new Error('the offline speech engine did not start in time')), START_MS);
    startTimer.unref();
    worker.on('message', (reply: SynthReply) => {
      if (reply.id === -1) {
        clearTimeout(startTimer);
        if ('broken' in reply) return this.retire(slot, new Error(`the offline speech engine cannot start: ${reply.broken}`));
        slot.ready = true;
        this.idle(slot);
        return this.dispatch();
      }
      const current = slot.current;
      if (!current || current.id !== reply.id) return;
      clearTimeout(current.timer);
      slot.current = null;
      slot.worker.unref();
      if ('bytes' in reply) current.resolve({ bytes: new Uint8Array(reply.bytes), samples: reply.samples });
      else current.reject(new Error(`the offline speech engine failed: ${'failed' in reply ? reply.failed : 'an unexpected reply'}`));
      this.idle(slot);
      this.dispatch();
    });
    worker.on('error', (err: Error) => this.retire(slot, err));
    worker.on('exit', () => this.retire(slot, new Error('the offline speech engine worker exited')));
  }

  private idle(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.current === null) this.retire(slot, null);
    }, this.options.idleMs);
    slot.idleTimer.unref();
  }

  /** A worker that ends: its piece (if any) fails with `err`; a worker not yet ready fails the waiting pieces too. */
  private retire(slot: Slot, err: Error | null): void {
    if (!this.slots.delete(slot)) return;
    clearTimeout(slot.idleTimer);
    void slot.worker.terminate();
    fs.rmSync(slot.dir, { recursive: true, force: true });
    const current = slot.current;
    slot.current = null;
    if (current) {
      clearTimeout(current.timer);
      current.reject(err ?? new Error('the offline speech engine worker ended'));
    }
    // A worker that could not start would fail every time: the pieces waiting fail with it.
    if (!slot.ready && err && this.slots.size === 0) for (const p of this.waiting.splice(0)) p.reject(err);
    if (!this.closed) this.dispatch();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.waiting.splice(0)) p.reject(serviceUnavailable('The service is shutting down.'));
    for (const slot of [...this.slots]) this.retire(slot, new Error('the service is shutting down'));
  }
}
