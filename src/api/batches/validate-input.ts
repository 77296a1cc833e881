// Validates a batch's input file before any line runs: each line a JSON object with a
// unique `custom_id`, `method` POST, `url` the batch's endpoint, and a `body` the
// endpoint's contract accepts for the batch's key (the same check a POST gets). A file
// with any bad line fails the batch, with the line numbers in `errors`.
import sjson from 'secure-json-parse';
import { ApiError } from '../../errors.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../../pipeline/json/text.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { newCall } from '../../pipeline/call.ts';
import { checkCall } from '../../pipeline/contract.ts';
import type { BatchEndpoint } from './batch-endpoints.ts';

/** OpenAI's own limit on requests per batch. */
export const MAX_BATCH_LINES = 50_000;
/** Errors kept in the batch object; the count says how many there were. */
const MAX_ERRORS = 100;
const MAX_CUSTOM_ID = 512;

export interface BatchLineError {
  code: string;
  message: string;
  param: string | null;
  /** 1-based, as an editor shows it */
  line: number | null;
}

export interface BatchLine {
  /** 1-based */
  lineNo: number;
  customId: string;
  body: Record<string, unknown>;
}

const silent = { level: 'silent', info() {}, warn() {}, error() {} };
const PARSE_OPTIONS = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * One line parsed and checked; throws a BatchLineError-shaped error. `seen` holds the
 * custom ids so far (uniqueness across the file).
 */
export function parseLine(text: string, lineNo: number, url: string, endpoint: BatchEndpoint | undefined, key: KeyRecord, seen: Set<string>): BatchLine {
  const fail = lineFailure(lineNo);
  // Create refuses such a batch; one stored before its endpoint stopped being offered ends here.
  if (!endpoint) fail('invalid_endpoint', `The endpoint ${url} cannot be used in a batch here.`);
  const bytes = Buffer.from(text);
  if (tooDeep(bytes)) fail('invalid_json_line', `Line ${lineNo} is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  let value: unknown;
  try {
    value = sjson.parse(text, null, PARSE_OPTIONS);
  } catch (err) {
    fail('invalid_json_line', `Line ${lineNo} is not valid JSON: ${(err as Error).message}`);
  }
  return checkLine(value, lineNo, url, endpoint!, key, seen);
}

const lineFailure =
  (lineNo: number) =>
  (code: string, message: string, param: string | null = null): never => {
    throw Object.assign(new Error(message), { batchError: { code, message, param, line: lineNo } satisfies BatchLineError });
  };

/**
 * One parsed line checked: a `custom_id` unique in `seen`, POST to `url`, a body the
 * endpoint's contract accepts for the key, not a stream. The messages-style surface
 * checks the requests of a batch body with it (they arrive parsed).
 */
export function checkLine(value: unknown, lineNo: number, url: string, endpoint: BatchEndpoint, key: KeyRecord, seen: Set<string>): BatchLine {
  const fail = lineFailure(lineNo);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('invalid_json_line', `Line ${lineNo} must be a JSON object.`);
  const obj = value as Record<string, unknown>;
  const customId = obj.custom_id;
  if (typeof customId !== 'string' || customId.length === 0) fail('missing_custom_id', `Line ${lineNo} needs a custom_id string.`, 'custom_id');
  if ((customId as string).length > MAX_CUSTOM_ID || (customId as string).includes('\u0000')) {
    fail('invalid_custom_id', `The custom_id of line ${lineNo} must be at most ${MAX_CUSTOM_ID} characters, without NUL.`, 'custom_id');
  }
  if (seen.has(customId as string)) fail('duplicate_custom_id', `The custom_id '${customId as string}' of line ${lineNo} is used by an earlier line.`, 'custom_id');
  seen.add(customId as string);
  if (obj.method !== 'POST') fail('invalid_method', `Line ${lineNo}: method must be POST.`, 'method');
  if (obj.url !== url) fail('mismatched_url', `Line ${lineNo}: url must be the batch's endpoint, ${url}.`, 'url');
  const body = obj.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('invalid_body', `Line ${lineNo}: body must be a JSON object.`, 'body');
  const probe = newCall({ id: 'validation', method: 'POST', route: { auth: 'key', contract: endpoint.contract, endpoint: url }, routeLabel: url, ip: '', log: silent });
  probe.key = key;
  try {
    checkCall(probe, { body });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    fail(err.code, `Line ${lineNo}: ${err.message}`, err.param === null ? 'body' : `body.${err.param}`);
  }
  if ((body as Record<string, unknown>).stream === true) fail('invalid_request', `Line ${lineNo}: a batch line cannot stream.`, 'body.stream');
  return { lineNo, customId: customId as string, body: body as Record<string, unknown> };
}

export function lineError(err: unknown): BatchLineError | undefined {
  return (err as { batchError?: BatchLineError }).batchError;
}

/**
 * Reads every line (yielding to the event loop as it goes: a file holds up to 50,000)
 * and returns the line count and the errors found, at most MAX_ERRORS of them.
 */
export async function validateInput(
  lines: AsyncIterable<string>,
  url: string,
  endpoint: BatchEndpoint | undefined,
  key: KeyRecord,
  signal?: AbortSignal,
): Promise<{ total: number; errors: BatchLineError[]; errorCount: number }> {
  const seen = new Set<string>();
  const errors: BatchLineError[] = [];
  let errorCount = 0;
  let lineNo = 0;
  let total = 0;
  let sinceYield = performance.now();
  for await (const text of lines) {
    lineNo++;
    if (text.trim() === '') continue; // a blank line (the file's last newline) is no request
    total++;
    if (total > MAX_BATCH_LINES) {
      errors.push({ code: 'too_many_requests', message: `A batch holds at most ${MAX_BATCH_LINES} requests.`, param: null, line: lineNo });
      errorCount++;
      break;
    }
    try {
      parseLine(text, lineNo, url, endpoint, key, seen);
    } catch (err) {
      const e = lineError(err);
      if (!e) throw err;
      errorCount++;
      if (errors.length < MAX_ERRORS) errors.push(e);
      if (e.code === 'invalid_endpoint') break; // every line would say the same
    }
    if (performance.now() - sinceYield > 5) {
      signal?.throwIfAborted();
      await new Promise((resolve) => setImmediate(resolve));
      sinceYield = performance.now();
    }
  }
  if (total === 0) errors.push({ code: 'empty_file', message: 'The input file holds no requests.', param: null, line: null });
  return { total, errors, errorCount: Math.max(errorCount, errors.length) };
}
