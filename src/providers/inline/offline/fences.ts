// Fenced code blocks (``` or ~~~, as CommonMark reads them) in the user's message: the
// way a caller drives a sandbox deterministically. A python block becomes a
// code_interpreter call and a bash block a shell command, each exactly as written.
// Read from the message's text parts only (conversation.ts), so an attached document
// with code examples in it runs nothing.

export interface Fence {
  /** The info string's first word, lower case ("" when there is none). */
  lang: string;
  /** The lines between the fences, their line breaks kept and nothing else changed. */
  code: string;
}

/**
 * Blocks are looked for in this much of the message's start: a tool call's arguments
 * cannot be longer (json-from-schema.ts MAX_OUTPUT_CHARS), and the scan is linear.
 */
export const FENCE_READ_CHARS = 262_144;
/** More blocks than this in one message are not read. */
const MAX_FENCES = 64;

export const PYTHON_LANGS: ReadonlySet<string> = new Set(['python', 'py', 'python3', 'py3']);
export const SHELL_LANGS: ReadonlySet<string> = new Set(['bash', 'sh', 'shell', 'console']);

/** One line each, so every match is bounded by the line it reads. */
const OPENING = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const CLOSING = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

interface Line {
  start: number;
  /** Index of the line's end: its '\n', or the text's end. */
  end: number;
  /** The line without its '\r\n' or '\n'. */
  text: string;
}

function* lines(text: string): Generator<Line> {
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    yield { start, end, text: text.slice(start, text[end - 1] === '\r' ? end - 1 : end) };
    start = end + 1;
  }
}

/** CommonMark drops up to the opening fence's indentation from each line of the block. */
function unindent(code: string, indent: number): string {
  if (indent === 0) return code;
  const strip = new RegExp(`^ {0,${indent}}`, 'gm');
  return code.replace(strip, '');
}

/**
 * The fenced blocks of `text` in order. A block left open runs to the text's end, as
 * CommonMark reads it, unless the text was longer than `max` (then its end is unseen
 * and the block is dropped rather than run cut short).
 */
export function fencedBlocks(text: string, max = FENCE_READ_CHARS): Fence[] {
  const cut = text.length > max;
  const body = cut ? text.slice(0, max) : text;
  const out: Fence[] = [];
  let open: { fence: string; indent: number; lang: string; from: number } | undefined;
  for (const line of lines(body)) {
    if (!open) {
      const m = OPENING.exec(line.text);
      // A backtick fence's info string may not hold a backtick (that is inline code).
      if (!m || (m[2]![0] === '`' && m[3]!.includes('`'))) continue;
      open = { fence: m[2]!, indent: m[1]!.length, lang: (m[3]!.trim().split(/\s/, 1)[0] ?? '').toLowerCase(), from: line.end + 1 };
      continue;
    }
    const close = CLOSING.exec(line.text);
    if (!close || close[1]![0] !== open.fence[0] || close[1]!.length < open.fence.length) continue;
    // The block ends before the line break that precedes the closing fence.
    let to = line.start - 1;
    if (to > open.from && body[to - 1] === '\r') to--;
    out.push({ lang: open.lang, code: unindent(body.slice(open.from, Math.max(open.from, to)), open.indent) });
    open = undefined;
    if (out.length >= MAX_FENCES) return out;
  }
  if (open && !cut) {
    const rest = body.slice(Math.min(open.from, body.length)).replace(/\r?\n$/, '');
    out.push({ lang: open.lang, code: unindent(rest, open.indent) });
  }
  return out;
}

/** The blocks in one of `langs`, in order. */
export function blocksIn(fences: readonly Fence[], langs: ReadonlySet<string>): string[] {
  return fences.filter((f) => langs.has(f.lang)).map((f) => f.code);
}

/**
 * `text` with its fenced blocks and inline code spans blanked out (same length, so
 * indexes still line up): the prose, where what the user asks is read from, apart from
 * the code they quote.
 */
export function proseOnly(text: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  let out = '';
  let open: string | undefined;
  for (const line of lines(text)) {
    const raw = text.slice(line.start, line.end + 1);
    if (!open) {
      const m = OPENING.exec(line.text);
      if (m && !(m[2]![0] === '`' && m[3]!.includes('`'))) {
        open = m[2]!;
        out += blank(raw);
      } else out += raw.replace(/`[^`\n]*`/g, blank);
      continue;
    }
    const close = CLOSING.exec(line.text);
    if (close && close[1]![0] === open[0] && close[1]!.length >= open.length) open = undefined;
    out += blank(raw);
  }
  return out;
}
