// Text completion: continue a prompt simply. "2 + 3 =" gets " 5"; a
// question or instruction gets an answer on a new paragraph; any other text
// is continued with a seeded walk over the prompt's own word pairs.
import { composeAnswer, type Verbosity } from './answer.ts';
import { evaluate, formatNumber } from './arithmetic.ts';
import type { Rng } from './rng.ts';

const QUESTION = /\?\s*$|^\s*(?:what|who|how|why|when|where|which|say|repeat|echo|summari[sz]e|tell|explain|calculate|compute)\b/i;
const WALK_WORDS: Record<Verbosity, number> = { low: 12, medium: 30, high: 80 };

export function composeCompletion(prompt: string, verbosity: Verbosity, rng: Rng): string {
  const sep = /\s$/.test(prompt) || prompt === '' ? '' : ' ';

  const eq = /([\d\s+\-*/^().]+)=\s*$/.exec(prompt);
  if (eq) {
    const value = evaluate((eq[1] as string).trim());
    if (value !== undefined) return sep + (value === null ? 'undefined' : formatNumber(value));
  }

  if (QUESTION.test(prompt)) {
    const conv = { lastUserText: prompt, instructions: '', attachments: { images: 0, files: 0, audio: 0 }, toolResults: [], fences: [] };
    return '\n\n' + composeAnswer(conv, verbosity, rng).text;
  }

  return sep + wordWalk(prompt, WALK_WORDS[verbosity], rng);
}

/** A bigram walk over the prompt's words, ending with a full stop. */
function wordWalk(prompt: string, count: number, rng: Rng): string {
  const words = prompt.match(/\S+/g) ?? [];
  if (words.length === 0) return 'The offline engine of agent-api continues here.';
  const next = new Map<string, string[]>();
  for (let i = 0; i + 1 < words.length; i++) {
    const key = (words[i] as string).toLowerCase();
    const list = next.get(key) ?? [];
    list.push(words[i + 1] as string);
    next.set(key, list);
  }
  const out: string[] = [];
  let current = words[words.length - 1] as string;
  for (let i = 0; i < count; i++) {
    const options = next.get(current.toLowerCase());
    current = options && options.length > 0 ? rng.pick(options) : rng.pick(words);
    out.push(current);
  }
  const text = out.join(' ');
  return /[.!?]$/.test(text) ? text : text.replace(/[,;:]$/, '') + '.';
}
