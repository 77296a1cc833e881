// Bytes that claim to be text, checked and decoded; and the one normalisation every
// extracted text goes through before it is chunked.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { DocumentError } from './document-error.ts';

/** The most extracted text kept, in UTF-8 bytes; a file that holds more is refused. */
export const MAX_TEXT_BYTES = 20 * 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const utf16le = new TextDecoder('utf-16le', { fatal: true, ignoreBOM: false });
const utf16be = new TextDecoder('utf-16be', { fatal: true, ignoreBOM: false });

/**
 * The text of a file that should be text: UTF-8 (a BOM is dropped), or UTF-16 when it
 * starts with a UTF-16 BOM (how Windows saves "Unicode" text). Anything else, or a NUL
 * character, means the file is not text: `invalid_file`.
 */
export function decodeText(bytes: Uint8Array, filename: string, what: string, maxBytes = MAX_TEXT_BYTES): string {
  if (bytes.length > maxBytes) {
    throw DocumentError.about('invalid_file', filename, `is larger than ${maxBytes / 1024 / 1024} MB; ${what} files are read up to that size.`);
  }
  const bom16 = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
  let text: string;
  try {
    // The decoders drop a leading BOM themselves (ignoreBOM: false).
    text = (bom16 ? (bytes[0] === 0xff ? utf16le : utf16be) : utf8).decode(bytes);
  } catch (err) {
    throw DocumentError.about('invalid_file', filename, `is not valid ${bom16 ? 'UTF-16' : 'UTF-8'} text${invalidAt(bytes, bom16)}; ${what} files must be UTF-8.`, err);
  }
  const nul = text.indexOf('\0');
  if (nul !== -1) {
    throw DocumentError.about('invalid_file', filename, `holds a NUL character (at character ${nul}): it looks like a binary file, not ${what} text.`);
  }
  return text;
}

/** Where the first invalid UTF-8 sequence starts, for the message (empty for UTF-16). */
function invalidAt(bytes: Uint8Array, bom16: boolean): string {
  if (bom16) return '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return ` (byte ${i})`;
    for (let k = 1; k < n; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return ` (byte ${i})`;
    // Overlongs and surrogates: the decoder refused something here, name this sequence.
    const b1 = bytes[i + 1] ?? 0;
    if ((b === 0xe0 && b1 < 0xa0) || (b === 0xed && b1 >= 0xa0) || (b === 0xf0 && b1 < 0x90) || (b === 0xf4 && b1 >= 0x90)) return ` (byte ${i})`;
    i += n;
  }
  return '';
}

/** Characters normalised per turn of the event loop. */
export const NORMALIZE_SLICE_CHARS = 1 << 20;

/**
 * The text as chunking wants it: line breaks as \n (form feeds and vertical tabs too),
 * no other control characters, no trailing whitespace on a line, at most one blank line
 * in a row (a paragraph break), none at either end; lone surrogates become U+FFFD.
 * Works in slices of about 1 M characters, yielding to the event loop between them and
 * stopping with the signal's reason when it is aborted.
 */
export async function normalizeText(text: string, signal?: AbortSignal): Promise<string> {
  const out: string[] = [];
  let blankRun = 0; // blank lines seen since the last line with text
  let started = false;
  for (let start = 0; start < text.length; ) {
    if (start > 0) {
      await yieldToLoop();
      signal?.throwIfAborted();
    }
    // Cut after a line break, so no \r\n pair or surrogate pair is split.
    let end = start + NORMALIZE_SLICE_CHARS >= text.length ? text.length : text.indexOf('\n', start + NORMALIZE_SLICE_CHARS) + 1;
    if (end === 0) end = text.length;
    const lines = cleanSlice(text.slice(start, end)).split('\n');
    // A slice ending in \n yields a last empty "line" that belongs to the next slice.
    if (end < text.length) lines.pop();
    for (const raw of lines) {
      const line = raw.trimEnd();
      if (line === '') {
        blankRun++;
        continue;
      }
      if (started) out.push(blankRun > 0 ? '\n\n' : '\n');
      out.push(line);
      started = true;
      blankRun = 0;
    }
    start = end;
  }
  return out.join('');
}

/** ES2024 string methods (Node 20 has them; the project's lib is ES2022). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

function cleanSlice(s: string): string {
  const w = s as unknown as WellFormed;
  const wellFormed = w.isWellFormed() ? s : w.toWellFormed();
  return wellFormed.replace(/\r\n?|[\f\v]/g, '\n').replace(/[\0-\x08\x0e-\x1f\x7f]/g, '');
}
