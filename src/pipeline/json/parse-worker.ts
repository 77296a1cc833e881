// A worker thread of parse-pool.ts: parses a large JSON body with the one parser
// (text.ts: UTF-8, depth, prototype keys) and, for an endpoint of the contract
// registry, runs the body checks that do not depend on the key (examineJsonBody), or
// keeps only the top-level fields asked for; the result goes back in pieces (pieces.ts),
// a refusal as the ApiError's fields.
import fs from 'node:fs';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { ALL_ENDPOINTS } from '../../contract/registry.ts';
import { ApiError } from '../../errors.ts';
import { examineJsonBody } from '../contract.ts';
import { parseJsonText } from './text.ts';
import { toPieces } from './pieces.ts';

/** The worker thread's nice value: 10 above the event loop's. */
const WORKER_NICE = Math.min(19, os.getPriority() + 10);

export interface ParseJob {
  id: number;
  bytes: ArrayBuffer;
  /** The endpoint's index in ALL_ENDPOINTS, or null: parse only. */
  endpoint: number | null;
  /** What the parser's errors call the text (parseJsonText's `noun`). */
  noun?: string;
  /** Of an object, only these top-level fields go back (no endpoint). */
  pick?: readonly string[];
}

export interface ApiErrorFields {
  status: number;
  type: string;
  code: string;
  message: string;
  param: string | null;
  headers?: Record<string, string>;
}

export type ParseReply =
  | { id: number; pieces: ArrayBuffer[]; checked: boolean }
  | { id: number; refused: ApiErrorFields }
  | { id: number; failed: string };

const fields = (e: ApiError): ApiErrorFields => ({ status: e.status, type: e.type, code: e.code, message: e.message, param: e.param, ...(e.headers ? { headers: e.headers } : {}) });

function run(job: ParseJob): ParseReply {
  let body: unknown;
  try {
    body = parseJsonText(Buffer.from(job.bytes), { noun: job.noun });
  } catch (err) {
    if (err instanceof ApiError) return { id: job.id, refused: fields(err) };
    throw err;
  }
  const contract = job.endpoint === null ? undefined : ALL_ENDPOINTS[job.endpoint];
  if (contract) {
    const found = examineJsonBody(contract, body);
    const result = found.result.ok ? found.result : { ok: false, error: fields(found.result.error) };
    try {
      return { id: job.id, pieces: toPieces({ ...found, result }), checked: true };
    } catch {
      // A checked value the structured clone cannot carry: the body goes back unchecked, and is checked on the event loop.
    }
  }
  if (job.pick && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const picked: Record<string, unknown> = {};
    for (const name of job.pick) if (Object.hasOwn(body, name)) picked[name] = (body as Record<string, unknown>)[name];
    body = picked;
  }
  return { id: job.id, pieces: toPieces(body), checked: false };
}

// Below the event loop: when both want the CPU, the server's answers come first. Linux
// gives each thread its own nice value (setpriority on the thread's id); elsewhere this
// does nothing.
try {
  const tid = Number(/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))?.[1]);
  if (tid > 0) os.setPriority(tid, WORKER_NICE);
} catch {
  // Not Linux, or not allowed: the worker runs at the event loop's priority.
}

parentPort!.on('message', (job: ParseJob) => {
  let reply: ParseReply;
  try {
    reply = run(job);
  } catch (err) {
    reply = { id: job.id, failed: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply, 'pieces' in reply ? reply.pieces : []);
});
