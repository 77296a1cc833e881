// The worker threads that decode and classify images for the offline moderation engine
// (their entry: image-worker.ts). Decoding a 20 MB JPEG or running MobileNetV2 takes
// tens to hundreds of milliseconds of CPU, which the event loop must never pay: here a
// few workers (AGENT_API_IMAGE_MODERATION_WORKERS) take one job at a time each, more
// jobs wait in a queue bounded in count and bytes (past it, 503: the service is busy),
// and the first job starts the first worker: nothing loads at server start.
//
// A worker, once started, lives as long as the process (unreferenced when idle, so it
// keeps nothing running): it holds the model, loaded once on its first image, and it
// has loaded libvips (sharp), which a thread that exits may unload under libvips's own
// threads (sharp's documented worker-thread caveat), so none is ever terminated, even
// one that overran: its job is answered at the time limit and the worker is given new
// work once it replies. One that dies (out of memory) is replaced.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../../../errors.ts';
import { ImageUnreadable, type ImageBytes, type PreparedImage } from '../../types.ts';
import { IMAGE_WORKER_ROLE, type ClassScores, type ImageJob, type ImageReply } from './image-worker.ts';

export interface ImagePoolOptions {
  /** Workers at most, each decoding or classifying one image at a time. */
  workers: number;
  /** Jobs that may wait for a worker; one more is refused (503). */
  maxQueued: number;
  /** Bytes of images that may wait; past it (with others waiting) 503. */
  maxQueuedBytes: number;
  /** A decode's time limit (the worker's start included). */
  decodeTimeoutMs: number;
  /** A classification's time limit (the worker's start and the model's load included). */
  classifyTimeoutMs: number;
  /** Each worker's V8 heap, in MB (libvips decodes outside it; the model's tensors live in wasm memory). */
  heapMb: number;
}

export const IMAGE_POOL_DEFAULTS: ImagePoolOptions = {
  // One core is the event loop's.
  workers: Math.max(1, Math.min(2, os.availableParallelism() - 1)),
  maxQueued: 64,
  maxQueuedBytes: 64 * 1024 * 1024,
  decodeTimeoutMs: 30_000,
  classifyTimeoutMs: 60_000,
  heapMb: 512,
};

// This module's sibling, with its extension: .ts from the sources (loaded through tsx,
// registered in the worker), .js once built (as the JSON parse pool does).
const SELF = fileURLToPath(import.meta.url);
const ENTRY = new URL(`./image-worker${path.extname(SELF)}`, import.meta.url).href;
const TSX = path.extname(SELF) === '.ts' ? import.meta.resolve('tsx/esm/api') : null;
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();
`;

type Done = Exclude<ImageReply, { kind: 'ready' }>;

interface Job {
  id: number;
  message: ImageJob;
  transfer: ArrayBuffer[];
  bytes: number;
  timeoutMs: number;
  signal: AbortSignal;
  onAbort?: () => void;
  settled: boolean;
  resolve(reply: Done): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  /** The job it works on (answered or not: a job answered at its time limit still holds its worker until it replies). */
  job: Job | null;
}

/** What a classification took: the class probabilities, and the model's load time when this image loaded it. */
export interface Classified {
  classes: ClassScores;
  loadMs: number | null;
}

export class ImagePool {
  private readonly options: ImagePoolOptions;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private queuedBytes = 0;
  private nextId = 0;

  constructor(options: Partial<ImagePoolOptions> = {}) {
    this.options = { ...IMAGE_POOL_DEFAULTS, ...options };
  }

  /** Decodes an image for the model (ImageUnreadable when it cannot be read). */
  async decode(image: ImageBytes, signal: AbortSignal): Promise<PreparedImage> {
    const source = 'base64' in image ? image.base64 : image.bytes;
    const buffer = ownBuffer(source);
    const message: ImageJob = 'base64' in image ? { id: 0, kind: 'decode', base64: buffer } : { id: 0, kind: 'decode', bytes: buffer };
    const reply = await this.run(message, [buffer], buffer.byteLength, this.options.decodeTimeoutMs, signal, () => new ImageUnreadable(`it took longer than ${this.options.decodeTimeoutMs / 1000} s to decode.`));
    if (reply.kind === 'decoded') return { width: reply.width, height: reply.height, pixels: new Uint8Array(reply.pixels) };
    throw this.failure(reply);
  }

  /** Classifies a decoded image (the model loaded on this worker's first one). */
  async classify(image: PreparedImage, signal: AbortSignal): Promise<Classified> {
    // A copy goes: the caller keeps its pixels (an input may be scored again).
    const pixels = new Uint8Array(image.pixels).buffer;
    const message: ImageJob = { id: 0, kind: 'classify', width: image.width, height: image.height, pixels };
    const reply = await this.run(message, [pixels], pixels.byteLength, this.options.classifyTimeoutMs, signal, () =>
      serviceUnavailable(`The image classifier did not answer within ${this.options.classifyTimeoutMs / 1000} s; try again shortly.`),
    );
    if (reply.kind === 'classified') return { classes: reply.classes, loadMs: reply.loadMs };
    throw this.failure(reply);
  }

  private failure(reply: Done): Error {
    if (reply.kind === 'unreadable') return new ImageUnreadable(reply.message);
    return new Error(`the image moderation worker failed: ${reply.kind === 'failed' ? reply.message : `unexpected ${reply.kind}`}`);
  }

  private run(message: ImageJob, transfer: ArrayBuffer[], bytes: number, timeoutMs: number, signal: AbortSignal, overrun: () => Error): Promise<Done> {
    signal.throwIfAborted();
    if (this.queue.length >= this.options.maxQueued || (this.queue.length > 0 && this.queuedBytes + bytes > this.options.maxQueuedBytes)) {
      return Promise.reject(serviceUnavailable('The service is busy with other images to moderate; try again shortly.'));
    }
    return new Promise<Done>((resolve, reject) => {
      const id = this.nextId++;
      let timer: NodeJS.Timeout | undefined;
      const job: Job = {
        id,
        message: { ...message, id },
        transfer,
        bytes,
        timeoutMs,
        signal,
        settled: false,
        resolve: (reply) => finish(() => resolve(reply)),
        reject: (err) => finish(() => reject(err)),
      };
      const finish = (outcome: () => void) => {
        if (job.settled) return;
        job.settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', job.onAbort!);
        outcome();
      };
      // Waiting, it leaves the queue; working, its worker finishes and its answer is dropped.
      job.onAbort = () => {
        const at = this.queue.indexOf(job);
        if (at !== -1) {
          this.queue.splice(at, 1);
          this.queuedBytes -= job.bytes;
        }
        job.reject(signal.reason);
      };
      signal.addEventListener('abort', job.onAbort, { once: true });
      timer = setTimeout(() => {
        const at = this.queue.indexOf(job);
        if (at !== -1) {
          this.queue.splice(at, 1);
          this.queuedBytes -= job.bytes;
        }
        job.reject(overrun());
      }, timeoutMs);
      this.queue.push(job);
      this.queuedBytes += bytes;
      this.dispatch();
    });
  }

  /** Gives waiting jobs to free workers, starting workers up to the maximum. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => s.job === null);
      if (!slot && this.slots.size < this.options.workers) slot = this.start();
      if (!slot) return;
      const job = this.queue.shift()!;
      this.queuedBytes -= job.bytes;
      slot.job = job;
      // Referenced while it works (a caller awaits it); not when idle.
      slot.worker.ref();
      slot.worker.postMessage(job.message, job.transfer);
    }
  }

  private start(): Slot {
    const worker = new Worker(BOOT, {
      eval: true,
      execArgv: [],
      workerData: { role: IMAGE_WORKER_ROLE, entry: ENTRY, tsx: TSX },
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
    });
    worker.unref();
    const slot: Slot = { worker, job: null };
    this.slots.add(slot);
    worker.on('message', (reply: ImageReply) => {
      if (reply.kind === 'ready') return;
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      slot.job = null;
      worker.unref();
      job.resolve(reply);
      this.dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => this.lost(slot, err));
    worker.on('exit', () => this.lost(slot, new Error('the image moderation worker exited')));
    return slot;
  }

  /** A worker that died: its job fails (an image that exhausted the heap is refused), a new worker takes the queue. */
  private lost(slot: Slot, err: Error & { code?: string }): void {
    if (!this.slots.delete(slot)) return;
    const job = slot.job;
    slot.job = null;
    if (job) {
      job.reject(
        err.code === 'ERR_WORKER_OUT_OF_MEMORY' && job.message.kind === 'decode' ? new ImageUnreadable('it needs more memory to decode than an image may use.') : err,
      );
    }
    this.dispatch();
  }

  /** Workers started and jobs waiting (tests, metrics). */
  get stats(): { workers: number; busy: number; queued: number } {
    return { workers: this.slots.size, busy: [...this.slots].filter((s) => s.job !== null).length, queued: this.queue.length };
  }
}

/** An ArrayBuffer holding exactly these bytes, to transfer: the view's own when it spans it, else a copy. */
function ownBuffer(view: Uint8Array): ArrayBuffer {
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength && view.buffer instanceof ArrayBuffer) return view.buffer;
  // A copy (Buffer's slice() is a view, not a copy).
  return new Uint8Array(view).buffer;
}

let shared: ImagePool | null = null;

/** The process's pool (its workers are the process's), made on first use with these options. */
export function imagePool(options: Partial<ImagePoolOptions> = {}): ImagePool {
  shared ??= new ImagePool(options);
  return shared;
}
