// The page reader behind the assistant's `open_page` and `find_in_page` tools (issue 20
// item 3). The address is a caller's or a search result's choice, so it is fetched only
// through the outbound guard. HTML becomes readable text (page-text.ts, on the workers of
// convert-pool.ts), other text types are read as they are, anything else is refused;
// every failure is a PageFailed whose message can be told to the model as is.
//
// The guard sends the User-Agent and Accept given here to the first origin only, so a
// page reached by a redirect to another origin gets neither.
import { STATUS_CODES } from 'node:http';
import { OutboundRefused, type OutboundGuard } from '../../outbound/guard.ts';
import { convertOnWorker } from './convert-pool.ts';
import { convertPage, kindOf, PageFailed, parseContentType, safeType, type ConvertJob, type Page } from './page-text.ts';

export interface ReadPageOptions {
  /** The caller's cancellation: rejects with its reason (not a PageFailed). */
  signal?: AbortSignal;
  /** Characters of text kept at most (default 20 000). */
  maxChars?: number;
  /** Bytes of the answer read at most; a larger one is refused (default 2 MiB). */
  maxBytes?: number;
  /** The fetch's time limit, redirects and body included (default 15 s). */
  timeoutMs?: number;
  /** How long converting HTML may take on its worker (default 5 s). */
  convertTimeoutMs?: number;
}

export const DEFAULT_MAX_CHARS = 20_000;
export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_CONVERT_TIMEOUT_MS = 5_000;
/** Text bodies up to this size are read on the calling thread. */
const INLINE_TEXT_BYTES = 64 * 1024;

const USER_AGENT = 'agent-api/0.1 (+open_page)';
const ACCEPT = 'text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1';

/**
 * Fetches `url` through the guard and returns its readable text. Throws PageFailed when
 * the page cannot be read (refused, unreachable, too slow, too large, an error status,
 * not text, too complex to convert); rejects with the signal's reason when it is aborted.
 */
export async function readPage(guard: OutboundGuard, url: string, opts: ReadPageOptions = {}): Promise<Page> {
  const maxChars = Math.max(0, Math.floor(opts.maxChars ?? DEFAULT_MAX_CHARS));
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signal = opts.signal;
  signal?.throwIfAborted();
  let res: Awaited<ReturnType<OutboundGuard['fetch']>>;
  try {
    res = await guard.fetch(url, {
      signal,
      maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
      timeoutMs,
      maxRedirects: 5,
      headers: { 'user-agent': USER_AGENT, accept: ACCEPT },
    });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw fetchFailure(err, timeoutMs);
  }
  if (res.status < 200 || res.status > 299) {
    throw new PageFailed(`The page answered ${res.status}${STATUS_CODES[res.status] ? ` ${STATUS_CODES[res.status]}` : ''}.`);
  }
  const { type, charset } = parseContentType(res.headers.get('content-type'));
  const kind = kindOf(type, res.body);
  if (kind === 'other') {
    throw new PageFailed(`The page is not text: its content type is ${safeType(type)}, which cannot be read as a page.`);
  }
  const job: ConvertJob = { kind, type, bytes: res.body, charset, maxChars };
  // A small text is read here at once (well under a millisecond); HTML, and a larger
  // text (decoding a legacy charset runs at about 10 ms a MiB), on a worker.
  const read = kind === 'text' && res.body.byteLength <= INLINE_TEXT_BYTES ? convertPage(job) : await convertOnWorker(job, opts.convertTimeoutMs ?? DEFAULT_CONVERT_TIMEOUT_MS, signal);
  return { url: res.url, ...read };
}

/** The PageFailed for a fetch that threw (the caller's own abort is handled before). */
function fetchFailure(err: unknown, timeoutMs: number): PageFailed {
  if (err instanceof OutboundRefused) return new PageFailed(err.message);
  const name = (err as { name?: unknown })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new PageFailed(`The page did not answer within ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 100) / 10} s`}.`);
  }
  // undici's `fetch failed` carries the system error (ECONNREFUSED, ENOTFOUND, a TLS
  // code) as its cause; only such a code is repeated, never a message.
  let code: unknown;
  for (let e: unknown = err, i = 0; i < 4 && e && !code; i++, e = (e as { cause?: unknown }).cause) code = (e as { code?: unknown }).code;
  return new PageFailed(`The page could not be reached${typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? ` (${code})` : ''}.`);
}
