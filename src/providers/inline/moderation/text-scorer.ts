// Scores a text against the moderation categories with the rules of text-rules.ts: the
// text normalized, harmless idioms removed, then each sentence run through every rule. A
// category's score combines the rules that fired for it as independent evidence
// (1 - Π(1 - w)); a rule whose match follows a negation within a few words ("I would
// never hurt you") counts a fifth. A parent category is at least as high as its
// subcategories. What fired is returned, so a test or an operator can read why.
import { MODERATION_CATEGORIES as CATEGORIES } from '../../../contract/endpoints/moderations.ts';
import { IDIOMS, NEGATIONS, RULES, type Category, type Rule } from './text-rules.ts';

export interface Fired {
  rule: string;
  category: Category;
  weight: number;
  negated: boolean;
  /** The words it matched (normalized). */
  match: string;
}

export interface TextScore {
  scores: Record<Category, number>;
  fired: Fired[];
}

/** A score never says 0: no rule is certain a text is clean. */
const FLOOR = 1e-6;
const NEGATED_SHARE = 0.2;
/** How far back (characters) a negation turns a match around: about four words. */
const NEGATION_REACH = 28;
/** Sentences are scored in pieces of at most this many characters (the rules look within a sentence). */
const PIECE_CHARS = 2_000;
/** Work between two turns of the event loop (ms). */
const SLICE_MS = 4;

const PARENTS: readonly [Category, Category][] = [
  ['harassment/threatening', 'harassment'],
  ['hate/threatening', 'hate'],
  ['illicit/violent', 'illicit'],
  ['self-harm/intent', 'self-harm'],
  ['self-harm/instructions', 'self-harm'],
  ['sexual/minors', 'sexual'],
  ['violence/graphic', 'violence'],
];

/** Lower case, curly quotes straightened, anything but letters, digits and apostrophes a space. */
export function normalize(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc`]/g, "'")
    .replace(/[^a-z0-9'\n.!?;]+/g, ' ')
    .replace(/ +/g, ' ');
}

/** The sentences of a normalized text, each cut to PIECE_CHARS, idioms taken out. */
function pieces(normalized: string): string[] {
  const out: string[] = [];
  for (const sentence of normalized.split(/[\n.!?;]+/)) {
    let s = sentence.trim();
    if (s === '') continue;
    for (const idiom of IDIOMS) s = s.replace(idiom, ' ');
    s = s.replace(/ +/g, ' ').trim();
    for (let i = 0; i < s.length; i += PIECE_CHARS) out.push(s.slice(i, i + PIECE_CHARS));
  }
  return out;
}

function negatedAt(piece: string, at: number): boolean {
  const before = ` ${piece.slice(Math.max(0, at - NEGATION_REACH), at)} `;
  NEGATIONS.lastIndex = 0;
  return NEGATIONS.test(before);
}

function applyRule(rule: Rule, piece: string, fired: Fired[]): void {
  rule.pattern.lastIndex = 0;
  for (const m of piece.matchAll(rule.pattern)) {
    const negated = negatedAt(piece, m.index);
    fired.push({ rule: rule.id, category: rule.category, weight: negated ? rule.weight * NEGATED_SHARE : rule.weight, negated, match: m[0].trim() });
    // One firing per rule and piece is enough evidence.
    break;
  }
}

/** The scores of what fired. */
export function combine(fired: readonly Fired[]): Record<Category, number> {
  const clean = Object.fromEntries(CATEGORIES.map((c) => [c, 1])) as Record<Category, number>;
  // A rule counts once (its strongest firing) however many sentences it fired in.
  const strongest = new Map<string, Fired>();
  for (const f of fired) if ((strongest.get(f.rule)?.weight ?? -1) < f.weight) strongest.set(f.rule, f);
  for (const f of strongest.values()) clean[f.category] *= 1 - f.weight;
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c, Math.max(FLOOR, 1 - clean[c])])) as Record<Category, number>;
  for (const [child, parent] of PARENTS) scores[parent] = Math.max(scores[parent], scores[child]);
  return scores;
}

/** Scores one text (synchronous: for texts already cut to size). */
export function scoreTextSync(text: string): TextScore {
  const fired: Fired[] = [];
  for (const piece of pieces(normalize(text))) for (const rule of RULES) applyRule(rule, piece, fired);
  return { scores: combine(fired), fired };
}

/** A long text read this much at a time (cut at a line or sentence end where there is one). */
const WINDOW_CHARS = 16_384;

/** The text in windows of about WINDOW_CHARS, each ending at a line or sentence end when one is near. */
function* windows(text: string): Generator<string> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + WINDOW_CHARS);
    if (end < text.length) {
      const cut = Math.max(text.lastIndexOf('\n', end), text.lastIndexOf('. ', end));
      if (cut > at + WINDOW_CHARS / 2) end = cut + 1;
    }
    yield text.slice(at, end);
    at = end;
  }
}

/** Scores one text of any length, giving the event loop a turn every few milliseconds. */
export async function scoreText(text: string, signal?: AbortSignal): Promise<TextScore> {
  const fired: Fired[] = [];
  let sliceStart = performance.now();
  const breathe = async () => {
    if (performance.now() - sliceStart <= SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    sliceStart = performance.now();
  };
  for (const window of windows(text)) {
    for (const piece of pieces(normalize(window))) {
      for (const rule of RULES) applyRule(rule, piece, fired);
      await breathe();
    }
    await breathe();
  }
  return { scores: combine(fired), fired };
}
