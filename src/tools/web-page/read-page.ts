// The page reader behind the assistant's `open_page` and `find_in_page` tools (issue 20
// item 3). The address is a caller's or a search result's choice, so it is fetched only
// through the outbound guard. HTML becomes readable text (html-to-text), other text types
// are read as they are, anything else is refused; every failure is a PageFailed whose
// message can be told to the model as is.
//
// The guard sends the User-Agent and Accept given here to the first origin only, so a
// page reached by a redirect to another origin gets neither.
//
// CPU: html-to-text is far too slow for the event loop. Measured on this project's
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
// part already fills `maxChars` costs only that part. A text body over 64 KiB goes to a
// worker too (a legacy charset decodes at about 10 ms a MiB); a smaller one is read here.
import { STATUS_CODES } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { compile, type HtmlToTextOptions } from 'html-to-text';
import { OutboundRefused, type OutboundGuard } from '../../outbound/guard.ts';

export interface Page {
  /** The final URL, after redirects. */
  url: string;
  title: string | null;
  text: string;
  /** Whether text was left out: the page (or its HTML) was longer than read. */
  truncated: boolean;
}

/**
 * Why a page could not be read: safe to tell the model or the caller as is. Without a
 * final period (the guard's reasons too), so a caller can set it in its own sentence.
 */
export class PageFailed extends Error {
  constructor(message: string) {
    super(message.replace(/\.$/, ''));
    this.name = 'PageFailed';
  }
}

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
/** HTML characters converted at most, once script, style, svg and comments are out. */
export const MAX_HTML_CHARS = 1024 * 1024;
/** Text bodies up to this size are read on the calling thread. */
const INLINE_TEXT_BYTES = 64 * 1024;
/** The first stage of conversion; the rest only when this gave too little text. */
const FIRST_STAGE_CHARS = 256 * 1024;

const USER_AGENT = 'agent-api/0.1 (+open_page)';
const ACCEPT = 'text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1';

/** Workers converting HTML at once (more pages wait); an idle one ends after a while. */
const MAX_WORKERS = 2;
const WORKER_IDLE_MS = 30_000;
/** Each worker's heap: converting 1 MiB of hostile HTML was measured at 60-160 MB. */
const WORKER_HEAP_MB = 256;
/** Starting a worker (loading this module, through tsx from the sources) may take this long. */
const WORKER_START_MS = 30_000;

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

// --- Content types and charsets

function parseContentType(header: string | null): { type: string; charset: string | null } {
  if (!header) return { type: '', charset: null };
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  const m = /;\s*charset\s*=\s*"?([^";\s]{1,40})/i.exec(header.slice(0, 1000));
  return { type, charset: m ? m[1]!.toLowerCase() : null };
}

/** A server's content type, repeated in a message only when it looks like one. */
const safeType = (type: string) => (/^[a-z0-9][\w.+-]{0,60}\/[\w.+-]{1,80}$/.test(type) ? type : type ? 'not one we recognise' : 'not given');

const TEXT_TYPES = /^(text\/.+|application\/(json|xml|javascript|ecmascript|x-ndjson|ndjson|x-yaml|yaml|toml|x-sh|[\w.-]+\+(json|xml)))$/;

function kindOf(type: string, body: Buffer): 'html' | 'text' | 'other' {
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (TEXT_TYPES.test(type)) return 'text';
  if (type) return 'other';
  // No content type: what the start of the body looks like.
  const bom = bomCharset(body);
  const head = body.subarray(bom === 'utf-8' ? 3 : 0, 1024);
  if (head.includes(0) && !bom) return 'other';
  return /^\s*(<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i.test(head.toString('latin1')) ? 'html' : 'text';
}

/** A byte order mark decides the encoding before any label (as browsers do). */
function bomCharset(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/** Decodes by the label, utf-8 when there is none or TextDecoder does not know it. */
function decode(bytes: Uint8Array, label: string | null): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label ?? 'utf-8', { ignoreBOM: false });
  } catch {
    decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  }
  return decoder.decode(bytes);
}

/** The charset a `<meta>` in the first 4 KB names, as browsers look for it. */
function metaCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 4096)).toString('latin1');
  const lower = asciiLower(head);
  for (let at = lower.indexOf('<meta'); at !== -1; at = lower.indexOf('<meta', at + 5)) {
    const end = lower.indexOf('>', at);
    // One tag at a time, so the pattern runs on a short string.
    const m = /charset\s*=\s*["']?\s*([a-z0-9_.:-]{1,40})/.exec(lower.slice(at, end === -1 ? at + 512 : Math.min(end, at + 512)));
    // A page cannot say it is UTF-16 in UTF-16-unreadable ASCII: browsers read utf-8.
    if (m) return m[1]!.startsWith('utf-16') ? 'utf-8' : m[1]!;
  }
  return null;
}

/** ASCII-only lower case: the same length as the input, so indices carry over. */
const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

// --- Text

/**
 * The text as the model should see it, at most `maxChars`: line breaks as \n, no control
 * or zero-width characters, non-breaking spaces as spaces, no trailing whitespace, at
 * most one blank line in a row, none at either end. Line by line, stopping when full.
 */
export function tidy(text: string, maxChars: number): { text: string; truncated: boolean } {
  const out: string[] = [];
  let size = 0;
  let blank = false;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    // A line far longer than the room left is cleaned only as far as can be kept (the
    // cleaning is per character, so its prefix is the prefix of the whole).
    const room = maxChars - size;
    let line = end - start > 2 * room + 1024 ? cleanLine(text.slice(start, start + 2 * room + 1024)) : '';
    if (line.length <= room) line = cleanLine(text.slice(start, end));
    start = end + 1;
    if (line === '') {
      blank = size > 0;
      continue;
    }
    const sep = size === 0 ? '' : blank ? '\n\n' : '\n';
    blank = false;
    if (size + sep.length + line.length > maxChars) {
      if (room - sep.length > 0) out.push(sep, cutAt(line, room - sep.length).trimEnd());
      return { text: out.join(''), truncated: true };
    }
    out.push(sep, line);
    size += sep.length + line.length;
  }
  return { text: out.join(''), truncated: false };
}

const cleanLine = (s: string) =>
  s
    .replace(/[\0-\x08\x0b-\x1f\x7f\u200b-\u200d\u2060\ufeff]/g, '')
    .replace(/[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g, ' ')
    .trimEnd();

/** The first `n` characters, one fewer rather than half a surrogate pair. */
function cutAt(s: string, n: number): string {
  const code = s.charCodeAt(n - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

// --- HTML (on the worker)

/** Cell separator: a table read row by row, not laid out in columns (linear, and terser). */
const cellFormatter: NonNullable<HtmlToTextOptions['formatters']>[string] = (elem, walk, builder) => {
  walk(elem.children, builder);
  builder.addInline(' | ');
};

/** A noncharacter: html-to-text puts it where a limit left content out. */
const LIMIT_MARK = '\ufdd0';

const skip = (selector: string) => ({ selector, format: 'skip' });

const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  decodeEntities: true,
  // Our own cap comes first. maxDepth keeps the recursive walk off the stack's limit; the
  // child cap bounds the work on a flat page far beyond what maxChars keeps. Where either
  // left something out, the mark says so (the page is then truncated).
  limits: { maxInputLength: MAX_HTML_CHARS + 1, maxDepth: 500, maxChildNodes: 20_000, ellipsis: LIMIT_MARK },
  formatters: { cell: cellFormatter },
  selectors: [
    // Link text only: the addresses would be clutter for the model.
    { selector: 'a', options: { ignoreHref: true } },
    ...['head', 'title', 'script', 'style', 'noscript', 'template', 'svg', 'img', 'picture', 'video', 'audio', 'canvas', 'iframe', 'object', 'embed', 'nav', 'button', 'select', 'input', 'textarea'].map(skip),
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    { selector: 'ul', options: { itemPrefix: '- ' } },
    { selector: 'table', format: 'block', options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } },
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: 'td', format: 'cell' },
    { selector: 'th', format: 'cell' },
    { selector: 'hr', format: 'block', options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } },
  ],
};

let htmlConvert: ((html: string) => string) | undefined;
let titleConvert: ((html: string) => string) | undefined;

export interface ConvertJob {
  kind: 'html' | 'text';
  /** The content type, for a message. */
  type: string;
  bytes: Uint8Array;
  /** From the Content-Type header. */
  charset: string | null;
  maxChars: number;
}

/**
 * A body to a page's title and text; throws PageFailed for a text that is binary. Runs
 * on a worker but for a small text (exported to be measured).
 */
export function convertPage(job: ConvertJob): Omit<Page, 'url'> {
  if (job.kind === 'html') return convertHtml(job);
  const text = decode(job.bytes, bomCharset(job.bytes) ?? job.charset);
  // A body that claims to be text but holds NUL characters is a binary file mislabelled.
  if (text.slice(0, 4096).includes('\0')) throw new PageFailed(`The page is not text: it is labelled ${safeType(job.type)} but holds binary data.`);
  return { title: null, ...tidy(text, job.maxChars) };
}

function convertHtml(job: ConvertJob): Omit<Page, 'url'> {
  htmlConvert ??= compile(HTML_OPTIONS);
  titleConvert ??= compile({ wordwrap: false, limits: { maxDepth: 50 } });
  const html = stripRawText(decode(job.bytes, bomCharset(job.bytes) ?? job.charset ?? metaCharset(job.bytes)));
  const title = titleOf(html);
  const cut = html.length > MAX_HTML_CHARS;
  let result: { text: string; truncated: boolean } | undefined;
  let limited = false;
  const convert = (part: string) => {
    // A list item left empty (its icon or link image skipped) would be a bare bullet.
    const text = htmlConvert!(part).replace(/^(?:-|\d+\.) *(?:\n|$)/gm, '');
    if (!text.includes(LIMIT_MARK)) return text;
    limited = true;
    return text.replaceAll(LIMIT_MARK, '');
  };
  if (html.length > 2 * FIRST_STAGE_CHARS) {
    // Cut HTML is fine for the parser; the text of a prefix is the prefix of the text.
    const first = tidy(convert(html.slice(0, FIRST_STAGE_CHARS)), job.maxChars);
    if (first.truncated) result = first;
    else limited = false;
  }
  result ??= tidy(convert(cut ? html.slice(0, MAX_HTML_CHARS) : html), job.maxChars);
  return { title: title === null ? null : collapse(titleConvert(title)).slice(0, 500) || null, text: result.text, truncated: result.truncated || cut || limited };
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

const RAW_ELEMENTS = ['script', 'style', 'svg'];

/**
 * The HTML without comments and script, style and svg elements, in one linear pass
 * (indexOf only). They carry no readable text and are most of a modern page's bytes, so
 * cutting them first leaves the conversion cap for the text. (An svg's own title goes
 * too, so the page's `<title>` is the first one left.)
 */
export function stripRawText(html: string): string {
  const lower = asciiLower(html);
  const parts: string[] = [];
  let kept = 0;
  let at = lower.indexOf('<');
  while (at !== -1) {
    let end = -1;
    if (lower.startsWith('<!--', at)) {
      const close = lower.indexOf('-->', at + 4);
      end = close === -1 ? html.length : close + 3;
    } else {
      for (const name of RAW_ELEMENTS) {
        if (!lower.startsWith(name, at + 1) || !/[\s/>]/.test(lower.charAt(at + 1 + name.length))) continue;
        const close = lower.indexOf(`</${name}`, at);
        const gt = close === -1 ? -1 : lower.indexOf('>', close);
        end = gt === -1 ? html.length : gt + 1;
        break;
      }
    }
    if (end === -1) {
      at = lower.indexOf('<', at + 1);
      continue;
    }
    parts.push(html.slice(kept, at));
    kept = end;
    at = lower.indexOf('<', end);
  }
  parts.push(html.slice(kept));
  return parts.join('');
}

/** The raw content of the first `<title>`, or null. */
function titleOf(html: string): string | null {
  const lower = asciiLower(html.length > MAX_HTML_CHARS ? html.slice(0, MAX_HTML_CHARS) : html);
  for (let at = lower.indexOf('<title'); at !== -1; at = lower.indexOf('<title', at + 6)) {
    if (!/[\s>]/.test(lower.charAt(at + 6))) continue;
    const open = lower.indexOf('>', at);
    if (open === -1) return null;
    const close = lower.indexOf('</title', open);
    return html.slice(open + 1, close === -1 ? Math.min(html.length, open + 1 + 2000) : Math.min(close, open + 1 + 2000));
  }
  return null;
}

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

async function convertOnWorker(job: ConvertJob, timeoutMs: number, signal: AbortSignal | undefined): Promise<Omit<Page, 'url'>> {
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

// --- find_in_page

export interface FindOptions {
  /** Matches returned at most (default 10). */
  maxMatches?: number;
  /** Characters shown either side of each match (default 200). */
  context?: number;
}

/**
 * Where `pattern` occurs in the page's text: a case-insensitive plain substring (no
 * pattern syntax, so nothing to backtrack), each match with an excerpt around it (not
 * starting or ending mid-word when it can help it), whitespace in the excerpt collapsed.
 * Matches do not overlap.
 */
export function findInPage(page: Page | string, pattern: string, opts: FindOptions = {}): { matches: { index: number; excerpt: string }[] } {
  const text = typeof page === 'string' ? page : page.text;
  const maxMatches = Math.max(0, Math.floor(opts.maxMatches ?? 10));
  const context = Math.min(5_000, Math.max(0, Math.floor(opts.context ?? 200)));
  const matches: { index: number; excerpt: string }[] = [];
  if (pattern.trim() === '' || maxMatches === 0) return { matches };
  const haystack = foldCase(text);
  const needle = foldCase(pattern);
  for (let at = haystack.indexOf(needle); at !== -1 && matches.length < maxMatches; at = haystack.indexOf(needle, at + needle.length)) {
    let from = Math.max(0, at - context);
    let to = Math.min(text.length, at + needle.length + context);
    // No word cut in half at either end (when the window has a space to cut at instead).
    if (from > 0 && !isSpace(text.charCodeAt(from - 1))) {
      let i = from;
      while (i < at && !isSpace(text.charCodeAt(i))) i++;
      if (i < at) from = i + 1;
    }
    if (to < text.length && !isSpace(text.charCodeAt(to))) {
      let i = to;
      while (i > at + needle.length && !isSpace(text.charCodeAt(i - 1))) i--;
      if (i > at + needle.length) to = i - 1;
    }
    // Nor half a surrogate pair.
    if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from--;
    if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to++;
    // No ellipsis marks: the caller frames the excerpt as it likes.
    const excerpt = text.slice(from, to).replace(/\s+/g, ' ').trim();
    matches.push({ index: at, excerpt });
  }
  return { matches };
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d || code === 0xa0;

/**
 * Lower case that keeps every index: toLowerCase lengthens a few characters (İ becomes
 * i + a combining dot), so when it changed the length, each code unit is folded alone
 * and kept as it was where folding would lengthen it.
 */
function foldCase(s: string): string {
  const lower = s.toLowerCase();
  if (lower.length === s.length) return lower;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const l = c.toLowerCase();
    out += l.length === 1 ? l : c;
  }
  return out;
}
