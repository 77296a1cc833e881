// A fetched page's body as readable text (the page reader's conversion, read-page.ts):
// the content type and charset read, text bodies decoded and tidied, HTML turned into
// text with html-to-text after script, style, svg and comments are cut out. Runs on the
// converter's workers (convert-pool.ts) but for a small text body.
import { compile, type HtmlToTextOptions } from 'html-to-text';

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

/** HTML characters converted at most, once script, style, svg and comments are out. */
export const MAX_HTML_CHARS = 1024 * 1024;
/** The first stage of conversion; the rest only when this gave too little text. */
const FIRST_STAGE_CHARS = 256 * 1024;

// --- Content types and charsets

export function parseContentType(header: string | null): { type: string; charset: string | null } {
  if (!header) return { type: '', charset: null };
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  const m = /;\s*charset\s*=\s*"?([^";\s]{1,40})/i.exec(header.slice(0, 1000));
  return { type, charset: m ? m[1]!.toLowerCase() : null };
}

/** A server's content type, repeated in a message only when it looks like one. */
export const safeType = (type: string) => (/^[a-z0-9][\w.+-]{0,60}\/[\w.+-]{1,80}$/.test(type) ? type : type ? 'not one we recognise' : 'not given');

const TEXT_TYPES = /^(text\/.+|application\/(json|xml|javascript|ecmascript|x-ndjson|ndjson|x-yaml|yaml|toml|x-sh|[\w.-]+\+(json|xml)))$/;

export function kindOf(type: string, body: Buffer): 'html' | 'text' | 'other' {
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
