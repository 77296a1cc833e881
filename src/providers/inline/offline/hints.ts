// Values the user's message suggests for schema properties: "weather in
// Paris" gives a `location`/`city` "Paris", "add 3 and 5" gives numeric
// properties 3 then 5, "unit is celsius" gives `unit` "celsius".
import { excerpt } from './conversation.ts';
import type { Hints } from './json-from-schema.ts';
import type { JsonSchema } from './schema-check.ts';

export interface HintExtras {
  /** The text answer, for properties such as `answer` or `summary` (JSON response formats). */
  answer?: string;
  /** A computed number, for numeric `answer`/`result` properties. */
  numericAnswer?: number;
  /** An arithmetic expression found in the message. */
  expression?: string;
}

const LOCATION = new Set(['location', 'city', 'place', 'country', 'destination', 'origin', 'address', 'region', 'town', 'area', 'where', 'state', 'venue', 'locality']);
const NAMED = new Set(['name', 'person', 'user', 'username', 'recipient', 'author', 'owner', 'title', 'company', 'organization', 'team', 'project', 'product', 'brand', 'who']);
const URL_WORDS = new Set(['url', 'uri', 'link', 'href', 'website', 'site', 'page', 'endpoint']);
const DATE_WORDS = new Set(['date', 'day', 'when', 'deadline', 'birthday', 'start', 'end', 'due']);
const EXPRESSION = new Set(['expression', 'expr', 'formula', 'equation', 'calculation', 'math']);
const ANSWER = new Set(['answer', 'response', 'result', 'reply', 'output', 'summary', 'explanation', 'text', 'content', 'message']);
const QUERY = new Set(['query', 'q', 'search', 'term', 'terms', 'keyword', 'keywords', 'prompt', 'text', 'input', 'question', 'message', 'content', 'topic', 'subject', 'description', 'body', 'instructions', 'request', 'command']);
/** Words that say little about a boolean's meaning ("include_x": only x matters). */
const GENERIC = new Set(['is', 'has', 'use', 'include', 'enable', 'enabled', 'with', 'should', 'allow', 'show', 'do', 'get', 'set', 'the', 'a', 'an', 'of', 'to', 'for', 'in']);
/** Capitalized words that start questions rather than name things. */
const NOT_NAMES = new Set(
  'what whats how when where why who which whose is are was were do does did can could would should will shall may might please tell show give find get check look search hi hello hey thanks thank i im ive id the a an and or but if then so this that these those it its my your our their in on at for to from of by with about weather today tomorrow yes no ok okay call use run send set make create list'.split(' '),
);
const PREPOSITION_BEFORE = /\b(?:in|at|for|near|to|from|of|about|around|into|visit|visiting)\s+$/i;

export function splitName(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** The code point ending at `end` (exclusive), as a string ('' at the start). */
function charBefore(text: string, end: number): string {
  if (end <= 0) return '';
  const low = text.charCodeAt(end - 1);
  return low >= 0xdc00 && low <= 0xdfff && end >= 2 ? text.slice(end - 2, end) : text.charAt(end - 1);
}

type FindWord = (phrase: string) => { index: number; length: number } | undefined;

const ASCII = /^[\x00-\x7f]*$/;

/**
 * Finds a phrase in `message` as a whole word, ignoring case: what
 * /(?<![\p{L}\p{N}])phrase(?![\p{L}\p{N}])/iu finds, without building that expression per
 * phrase (a case-insensitive Unicode class takes about a millisecond to compile, and a
 * schema may ask about thousands of names). ASCII phrases are looked up in the
 * lower-cased message; others through a case-insensitive expression of the phrase alone.
 */
function wordFinder(message: string): FindWord {
  const lower = message.toLowerCase();
  const sameIndexes = lower.length === message.length; // no character changed length
  const isWord = (start: number, end: number): boolean =>
    !WORD_CHAR.test(charBefore(message, start)) && !WORD_CHAR.test(String.fromCodePoint(message.codePointAt(end) ?? 32));
  return (phrase) => {
    if (sameIndexes && ASCII.test(phrase)) {
      const p = phrase.toLowerCase();
      for (let i = lower.indexOf(p); i >= 0; i = lower.indexOf(p, i + 1)) if (isWord(i, i + p.length)) return { index: i, length: p.length };
      return undefined;
    }
    const re = new RegExp(escapeRegExp(phrase), 'giu');
    for (let m = re.exec(message); m; m = re.exec(message)) {
      if (isWord(m.index, m.index + m[0].length)) return { index: m.index, length: m[0].length };
      re.lastIndex = m.index + 1; // occurrences may overlap
    }
    return undefined;
  };
}

/** Capitalized phrases, best first: after a preposition, then mid-sentence, then the rest. */
export function capitalizedPhrases(message: string): string[] {
  const scored: { text: string; score: number; at: number }[] = [];
  for (const m of message.matchAll(/\p{Lu}[\p{L}\p{N}'’.-]*(?:[ \t]+(?:\p{Lu}[\p{L}\p{N}'’.-]*|de|of|la|le|del|da|van|von))*/gu)) {
    const words = m[0].replace(/[.'’-]+$/, '').split(/[ \t]+/);
    let skipped = 0;
    while (words.length > 0 && NOT_NAMES.has((words[0] as string).toLowerCase().replace(/['’]/g, ''))) {
      words.shift();
      skipped++;
    }
    while (words.length > 0 && /^(de|of|la|le|del|da|van|von)$/.test(words[words.length - 1] as string)) words.pop();
    if (words.length === 0) continue;
    const at = m.index ?? 0;
    const before = message.slice(0, at);
    const sentenceStart = skipped === 0 && /(^|[.!?]\s*)$/.test(before);
    const score = PREPOSITION_BEFORE.test(before) && skipped === 0 ? 0 : sentenceStart ? 2 : 1;
    scored.push({ text: words.join(' '), score, at });
  }
  scored.sort((a, b) => a.score - b.score || a.at - b.at);
  return [...new Set(scored.map((s) => s.text))];
}

function quoted(message: string): string[] {
  return [...message.matchAll(/"([^"\n]{1,200})"|“([^”\n]{1,200})”/g)].map((m) => (m[1] ?? m[2]) as string);
}

const URL_RE = /https?:\/\/[^\s<>"'`)\]]+/g;
const EMAIL_RE = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const DATE_RE = /\b\d{4}-\d{2}-\d{2}\b/g;

export function urls(message: string): string[] {
  return [...message.matchAll(URL_RE)].map((m) => m[0].replace(/[.,;:!?]+$/, ''));
}

/** Numbers in order, ignoring those inside URLs, emails and dates. */
export function numbers(message: string): number[] {
  const plain = message.replace(URL_RE, ' ').replace(EMAIL_RE, ' ').replace(DATE_RE, ' ');
  return [...plain.matchAll(/(?<![\p{L}\d.])-?\d+(?:\.\d+)?(?![\p{L}\d])/gu)].map((m) => Number(m[0]));
}

/** The text after a mention of `word`, e.g. "set the color to blue" → "blue". */
function afterMention(message: string, findWord: FindWord, word: string): string | undefined {
  const mention = findWord(word);
  if (!mention) return undefined;
  // Case-sensitive from here: a value may run on over Capitalized Words only.
  const rest = message.slice(mention.index + mention.length);
  const m = /^\s*(?:(?:is|=|:|to|of|as|called|named)\s*)?(?:the\s+)?("[^"]+"|[^\s,.;!?"]+(?:\s+\p{Lu}[^\s,.;!?"]*)*)/u.exec(rest);
  const value = m?.[1]?.replace(/^"|"$/g, '');
  if (!value || NOT_NAMES.has(value.toLowerCase())) return undefined;
  return value;
}

export function createHints(fullMessage: string, extras: HintExtras = {}): Hints {
  const message = excerpt(fullMessage); // scanned once per property: a bounded view
  const findWord = wordFinder(message);
  const cache = new Map<string, unknown[]>();
  const nums = numbers(message);
  let numberCursor = 0; // numeric properties take the message's numbers in order
  const phrases = capitalizedPhrases(message);
  const cleanMessage = message.trim().replace(/\s+/g, ' ').slice(0, 200);

  const compute = (name: string, schema: JsonSchema): unknown[] => {
    const words = splitName(name);
    const has = (set: Set<string>): boolean => words.some((w) => set.has(w));
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    const out: unknown[] = [];

    if (extras.answer !== undefined && has(ANSWER)) {
      if ((type === 'number' || type === 'integer') && extras.numericAnswer !== undefined) out.push(extras.numericAnswer);
      out.push(extras.answer);
    }
    if (type === 'boolean') {
      const significant = words.filter((w) => !GENERIC.has(w));
      out.push(significant.length > 0 && significant.some((w) => findWord(w) !== undefined));
      return out;
    }
    if (type === 'number' || type === 'integer') {
      if (numberCursor < nums.length) out.push(nums[numberCursor++]);
      return out;
    }
    // Strings (and untyped values).
    for (const phrase of [name, words.join(' ')]) {
      const explicit = afterMention(message, findWord, phrase);
      if (explicit !== undefined && (words.length > 1 || phrase === name)) out.push(explicit);
    }
    if (has(URL_WORDS)) out.push(...urls(message));
    if (words.includes('email')) out.push(...[...message.matchAll(EMAIL_RE)].map((m) => m[0]));
    if (has(DATE_WORDS)) out.push(...[...message.matchAll(DATE_RE)].map((m) => m[0]));
    if (has(EXPRESSION) && extras.expression) out.push(extras.expression);
    if (has(LOCATION) || has(NAMED)) out.push(...quoted(message), ...phrases);
    if (has(QUERY)) out.push(...quoted(message), cleanMessage);
    return [...new Set(out.filter((v) => v !== ''))];
  };

  return {
    forProperty(name, schema) {
      let hit = cache.get(name);
      if (!hit) {
        hit = compute(name, schema);
        cache.set(name, hit);
      }
      return hit;
    },
    mentions: (text) => text.length > 0 && findWord(text) !== undefined,
  };
}
