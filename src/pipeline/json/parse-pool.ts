// Large JSON bodies are parsed on worker threads, so the event loop is never held by
// one. On the event loop a 9 MB body costs tens to hundreds of milliseconds: the UTF-8
// check and the depth scan, JSON.parse, and then the contract's zod check. A worker
// (parse-worker.ts) runs the one parser (text.ts) and, for an endpoint of the
// contract registry, the body checks that do not depend on the key, so a body refused
// for its content costs the event loop nothing but its bytes. What passes comes back in
// pieces (pieces.ts), rebuilt one per turn of the event loop.
//
// A few workers, each parsing one body at a time; more bodies wait in a queue bounded
// in bytes (past it, 503: the service is busy); an idle worker ends after a while.
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ALL_ENDPOINTS } from '../../contract/registry.ts';
import type { EndpointContract } from '../../contract/types.ts';
import { ApiError, invalidRequest, serviceUnavailable } from '../../errors.ts';
import { CheckedBody, type BodyFindings } from '../contract.ts';
import { PieceReader } from './pieces.ts';
import type { ApiErrorFields, ParseJob, ParseReply } from './parse-worker.ts';

export interface JsonParsePoolOptions {
  /** Workers at most, each parsing one body at a time. */
  maxWorkers: number;
  /** Bytes of bodies that may wait for a worker; a body past it is refused (503). */
  maxQueuedBytes: number;
  /** Each worker's heap (V8 old generation), in MB: a body needing more is refused. */
  heapMb: number;
  /** An idle worker ends after this long. */
  idleMs: number;
}

export const JSON_POOL_DEFAULTS: JsonParsePoolOptions = {
  // One core is the event loop's.
  maxWorkers: Math.max(1, Math.min(2, os.availableParallelism() - 1)),
  maxQueuedBytes: 64 * 1024 * 1024,
  heapMb: 512,
  idleMs: 60_000,
};

// The entry beside this module, with its extension: .ts from the sources (loaded
// through tsx, registered in the worker), .js once built (as documents/sandbox.ts).
const SELF = fileURLToPath(import.meta.url);
const ENTRY = new URL(`./parse-worker${path.extname(SELF)}`, import.meta.url).href;
const TSX = path.extname(SELF) === '.ts' ? import.meta.resolve('tsx/esm/api') : null;
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})();
`;

/** The registry's endpoints by identity: a worker checks a body only against the very table the route has. */
const REGISTERED = new Map<EndpointContract, number>(ALL_ENDPOINTS.map((c, i) => [c, i]));

interface Job {
  id: number;
  bytes: Buffer;
  endpoint: number | null;
  noun: string | undefined;
  pick: readonly string[] | undefined;
  /** True once the client has gone: the body is not parsed. */
  gone: () => boolean;
  resolve(reply: ParseReply): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  idleTimer?: NodeJS.Timeout;
}

/** For a client that went away before its body was parsed: nobody reads it, nothing runs after it. */
export const clientGone = () => invalidRequest('The client went away before its request body was parsed.');

const rebuild = (e: ApiErrorFields) => new ApiError(e.status, e.type, e.code, e.message, e.param, e.headers);

export class JsonParsePool {
  private readonly options: JsonParsePoolOptions;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private queuedBytes = 0;
  private nextId = 0;
  private closed = false;

  constructor(options: Partial<JsonParsePoolOptions> = {}) {
    this.options = { ...JSON_POOL_DEFAULTS, ...options };
  }

  /**
   * The parsed body, or, for a JSON endpoint of the registry, a CheckedBody (what its
   * contract check found, for checkCall). Throws the parser's ApiError for a body it
   * refuses, as parseJsonBody does (`noun`: what its errors call the text, as parseJsonText's).
   * `pick` (no contract): of an object, only those top-level fields come back, so a
   * caller that reads a few (the gateway) rebuilds no more of a large body than that.
   */
  async parse(bytes: Buffer, contract: EndpointContract | null | undefined, gone: () => boolean = () => false, noun?: string, pick?: readonly string[]): Promise<unknown> {
    const endpoint = contract && contract.body?.type === 'json' ? (REGISTERED.get(contract) ?? null) : null;
    const reply = await this.run(bytes, endpoint, gone, noun, endpoint === null ? pick : undefined);
    if ('refused' in reply) throw rebuild(reply.refused);
    if ('failed' in reply) throw new Error(`parsing a JSON body on a worker thread failed: ${reply.failed}`);
    const reader = new PieceReader();
    for (let i = 0; i < reply.pieces.length; i++) {
      // One piece per turn: requests that arrived meanwhile are served in between.
      if (i > 0) await nextTurn();
      reader.read(reply.pieces[i]!);
    }
    if (!reply.checked) return reader.value;
    const found = reader.value as Omit<BodyFindings, 'result'> & { result: BodyFindings['result'] | { ok: false; error: ApiErrorFields } };
    const result = found.result.ok ? found.result : { ok: false as const, error: rebuild(found.result.error as ApiErrorFields) };
    return new CheckedBody({ ...found, result });
  }

  private run(bytes: Buffer, endpoint: number | null, gone: () => boolean, noun: string | undefined, pick: readonly string[] | undefined): Promise<ParseReply> {
    if (this.closed) return Promise.reject(serviceUnavailable('The service is shutting down.'));
    if (this.queuedBytes + bytes.length > this.options.maxQueuedBytes && this.queue.length > 0) {
      return Promise.reject(serviceUnavailable('The service is busy with other large request bodies; try again shortly.'));
    }
    return new Promise<ParseReply>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, bytes, endpoint, noun, pick, gone, resolve, reject });
      this.queuedBytes += bytes.length;
      this.dispatch();
    });
  }

  /** Gives waiting bodies to idle workers, starting workers up to the maximum. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => s.job === null);
      if (!slot && this.slots.size < this.options.maxWorkers) slot = this.start();
      if (!slot) return;
      const job = this.queue.shift()!;
      this.queuedBytes -= job.bytes.length;
      if (job.gone()) {
        job.reject(clientGone());
        continue;
      }
      clearTimeout(slot.idleTimer);
      slot.job = job;
      const b = job.bytes;
      // Transferred, not copied: the body's own buffer (Fastify copies every body into a fresh one).
      const own = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer;
      const bytes = own ? (b.buffer as ArrayBuffer) : (b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer);
      const message: ParseJob = { id: job.id, bytes, endpoint: job.endpoint, noun: job.noun, ...(job.pick ? { pick: job.pick } : {}) };
      slot.worker.postMessage(message, [bytes]);
    }
  }

  private start(): Slot {
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { entry: ENTRY, tsx: TSX },
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const slot: Slot = { worker, job: null };
    this.slots.add(slot);
    worker.on('message', (reply: ParseReply) => {
      const job = slot.job;
      if (!job || job.id !== reply.id) return;
      slot.job = null;
      job.resolve(reply);
      this.idle(slot);
      this.dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => this.lost(slot, err));
    worker.on('exit', () => this.lost(slot, new Error('the JSON parser worker exited')));
    return slot;
  }

  private idle(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.job !== null) return;
      this.slots.delete(slot);
      void slot.worker.terminate();
    }, this.options.idleMs);
    slot.idleTimer.unref();
  }

  /** A worker that died: its body is refused (one that exhausted the heap) or failed; the queue goes on. */
  private lost(slot: Slot, err: Error & { code?: string }): void {
    if (!this.slots.delete(slot)) return;
    clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = null;
    if (job) {
      job.reject(
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? invalidRequest('We could not parse the JSON body of your request: it needs more memory than a request may use.')
          : err,
      );
    }
    if (!this.closed) this.dispatch();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(serviceUnavailable('The service is shutting down.'));
    this.queuedBytes = 0;
    const slots = [...this.slots];
    this.slots.clear();
    for (const slot of slots) {
      clearTimeout(slot.idleTimer);
      slot.job?.reject(serviceUnavailable('The service is shutting down.'));
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The large-JSON pool of the app's body parser (installPipeline), for other transports' messages. */
    jsonParsePool: JsonParsePool;
  }
}
