// What the offline decision engine reads: the content words of a text as Porter stems,
// each marked when a negation governs it ("did not arrive" marks arrive), and how
// much a claim (an instruction, a choice, a level) is supported by an input's words.
// Lexical and explainable: a claim's word found in the input asserted supports it,
// found negated contradicts it, absent says nothing, and a claim's own negation turns
// that around ("does not mention pricing" holds when pricing is absent or denied).
import { stemmer } from 'stemmer';
import type { TimeSlice } from '../../../text/time-slice.ts';

export interface Term {
  stem: string;
  negated: boolean;
}

/** How one of a claim's words fared in the input: +1 supports, -1 contradicts, between: weaker evidence. */
export interface Evidence {
  stem: string;
  negatedInClaim: boolean;
  found: 'asserted' | 'negated' | 'absent';
  weight: number;
}

export interface Support {
  /** Sum of the evidence weights. */
  total: number;
  /** Distinct content words of the claim. */
  terms: number;
  evidence: Evidence[];
}

// Words, keeping an apostrophe inside one ("isn't", "don't").
const WORD = /[\p{L}\p{N}]+(?:['\u2019][\p{L}]+)*/gu;
// A clause ends a negation's reach.
const CLAUSE = /[.,;:!?()\n\r]+|\s(?:but|however|although|though|yet|except|whereas)\s/iu;
const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor', 'without', 'cannot', 'nowhere', 'hardly', 'lacks', 'lack', 'lacking', 'absent']);
/** Content words a negation reaches ("did not arrive damaged": arrive, damaged). */
const NEGATION_REACH = 4;
// Function words, and the words questions are framed with ("does the text mention",
// "is the customer asking whether"): they say what to look for, not what is there.
const STOP = new Set(
  (
    'a an and are as at be been being by can could did do does doing for from had has have having he her here hers him his how i if in into is it its itself ' +
    'just me my of off on once only or our ours out over own same she should so some such than that the their theirs them then there these they this ' +
    'those through to too under until up was we were what when where which while who whom why will with would you your yours am any also both each ' +
    'all text input message messages passage document writer author speaker sender user customer person someone mention mentions mentioned mentioning ' +
    'talk talks talking discuss discusses discussing about whether contain contains containing say says saying said express expresses expressing state ' +
    'states stating refer refers referring describe describes describing ask asks asking asked request requests requesting question questions answer ' +
    'indicate indicates indicating regarding concerning related relate relates given following true false yes please kind sort type'
  ).split(' '),
);

const stemOf = (word: string) => (word.length > 2 && !/\d/.test(word) ? stemmer(word) : word);

/** The content words of a clause in order, each marked when a negation governs it. */
function clauseTerms(clause: string, out: Term[]): void {
  let reach = 0;
  for (const m of clause.matchAll(WORD)) {
    const word = m[0].replace(/\u2019/g, "'");
    if (NEGATIONS.has(word) || word.endsWith("n't")) {
      reach = NEGATION_REACH;
      continue;
    }
    if (STOP.has(word)) continue;
    out.push({ stem: stemOf(word), negated: reach > 0 });
    if (reach > 0) reach--;
  }
}

/** The content words of a text (lower-cased, accents kept), clause by clause. */
export function termsOf(text: string): Term[] {
  const out: Term[] = [];
  for (const clause of text.normalize('NFKC').toLowerCase().split(CLAUSE)) if (clause) clauseTerms(clause, out);
  return out;
}

/** Characters read between two looks at the clock (a few hundred words). */
const STEP_CHARS = 2_048;

/** Every stem of an input, counted asserted and negated. */
export class InputIndex {
  private readonly counts = new Map<string, { asserted: number; negated: number }>();
  words = 0;

  /** Reads a text into the index a slice at a time (a long input never holds the event loop). */
  async add(text: string, slice: TimeSlice): Promise<void> {
    // Cut at clause ends near each step, so a negation and its words stay together.
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + STEP_CHARS);
      if (end < text.length) {
        const stop = text.slice(end, end + 256).search(/[.;!?\n]/);
        end = stop >= 0 ? end + stop + 1 : end;
      }
      for (const t of termsOf(text.slice(at, end))) {
        let c = this.counts.get(t.stem);
        if (!c) this.counts.set(t.stem, (c = { asserted: 0, negated: 0 }));
        if (t.negated) c.negated++;
        else c.asserted++;
        this.words++;
      }
      at = end;
      await slice.check();
    }
  }

  found(stem: string): Evidence['found'] {
    const c = this.counts.get(stem);
    if (!c) return 'absent';
    return c.asserted >= c.negated ? 'asserted' : 'negated';
  }
}

/** Absence supports a negated claim word only weakly: not saying a thing is not denying it. */
const ABSENT_SUPPORTS_NEGATED = 0.5;

/**
 * How the input supports a claim, word by word (each distinct content word once).
 * `deniedWeight` is what a claim's word found denied counts: -1 for a predicate (the
 * input says the opposite), 0 for an option, where a denied mention is still on topic
 * ("I cannot log in" is about login problems) but no support.
 */
export function support(claim: readonly Term[], input: InputIndex, deniedWeight = -1): Support {
  const seen = new Set<string>();
  const evidence: Evidence[] = [];
  let total = 0;
  for (const t of claim) {
    if (seen.has(t.stem)) continue;
    seen.add(t.stem);
    const found = input.found(t.stem);
    let weight: number;
    if (found === 'absent') weight = t.negated ? ABSENT_SUPPORTS_NEGATED : 0;
    else if ((found === 'asserted') !== t.negated) weight = 1;
    else weight = !t.negated && found === 'negated' ? deniedWeight : -1;
    evidence.push({ stem: t.stem, negatedInClaim: t.negated, found, weight });
    total += weight;
  }
  return { total, terms: seen.size, evidence };
}
