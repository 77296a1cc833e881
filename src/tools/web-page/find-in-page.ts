// find_in_page over a page's text: a plain case-insensitive substring, never a pattern.
import type { Page } from './page-text.ts';

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

