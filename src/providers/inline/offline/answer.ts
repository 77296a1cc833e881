// The engine's text answers: simple, honest, deterministic for a given seed.
// It echoes or summarizes, does arithmetic, says what it is, refuses to
// pretend it can browse, and reports tool results (a sandbox or shell run's through
// sandbox-answer.ts).
import { findArithmetic, formatNumber, type Arithmetic } from './arithmetic.ts';
import { isCodeToolName } from './code-interpreter.ts';
import type { Conversation, ToolResult } from './conversation.ts';
import { isShellName } from './command-intent.ts';
import { FILE_SEARCH_TOOL, PASSAGE_CHARS, prose, readPassages, searchQuery, type Passage } from './file-search.ts';
import type { Rng } from './rng.ts';
import { codeInterpreterAnswer, shellAnswer } from './sandbox-answer.ts';
import { webAnswer, WEB_TOOLS } from './web.ts';

export type Verbosity = 'low' | 'medium' | 'high';

export type Intent = 'tool_result' | 'identity' | 'browse' | 'say' | 'greeting' | 'summary' | 'arithmetic' | 'echo' | 'empty';

export interface Answer {
  text: string;
  intent: Intent;
  /** Set when the answer is arithmetic. */
  arithmetic?: Arithmetic;
}

export const IDENTITY_LINE = 'I am the offline engine of agent-api, a deterministic test model.';

const IDENTITY =
  /\b(?:who|what)\s+(?:are|r)\s+(?:you|u)\b|\byour name\b|\bwhat (?:model|engine|llm|ai)\b|\bare you (?:an? )?(?:ai|bot|robot|model|human|llm|gpt|chatgpt|real|person)\b|\bintroduce yourself\b|\babout yourself\b|\bwhich model\b/i;
const BROWSE =
  /\b(?:browse|browsing|surf the web)\b|\bsearch (?:the |on the )?(?:web|internet|online)\b|\bsearch online\b|\bgoogle (?:it|this|that|for)\b|\blook (?:it |this |that )?up online\b|\b(?:open|visit|fetch|load|go to|navigate to|download|scrape)\b[^.?!\n]*\b(?:url|link|website|web ?page|site)\b/i;
const URL_VERB = /\b(?:open|visit|fetch|load|go to|navigate|download|read|check|summari[sz]e|scrape|look at|what(?:'s| is) (?:on|at))\b/i;
const URL = /https?:\/\/[^\s<>"')\]]+/;
const SAY = /^\s*(?:please\s+)?(?:repeat|say|echo)(?:\s+(?:exactly|back|after me|verbatim|this|the following))*\s*[:\-]?\s+([\s\S]+?)\s*$/i;
const GREETING = /^\s*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|greetings)\b[\s!.,]*(?:there)?[\s!.,]*$/i;
const SUMMARIZE = /^\s*(?:please\s+)?(?:summari[sz]e|tl;?dr|give me a summary of|sum up)\b[\s:]*(?:this|the following)?[\s:]*([\s\S]*)$/i;

const STOPWORDS = new Set(
  'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its me my no not of on or our she so than that the their them then there these they this those to too us was we were what when where which who why will with would you your'.split(' '),
);

/** "Hello", "hi there!": a greeting and nothing else. */
export function isGreeting(message: string): boolean {
  return GREETING.test(message);
}

/** Verbosity asked for in instructions ("be brief", "in detail"), if any. */
export function verbosityFromInstructions(instructions: string): Verbosity | undefined {
  if (/\b(?:be brief|briefly|concise(?:ly)?|one sentence|short answers?)\b/i.test(instructions)) return 'low';
  if (/\b(?:in detail|detailed|elaborate|verbose|long answers?)\b/i.test(instructions)) return 'high';
  return undefined;
}

/** The simple formatting instructions the engine honours: upper or lower case. */
export function applyInstructions(text: string, instructions: string): string {
  if (/\b(?:upper ?case|all caps|all capitals|capital letters)\b/i.test(instructions)) return text.toUpperCase();
  if (/\b(?:lower ?case|no capital letters)\b/i.test(instructions)) return text.toLowerCase();
  return text;
}

export function sentences(text: string): string[] {
  return (text.replace(/\s+/g, ' ').trim().match(/[^.!?]+(?:[.!?]+|$)/g) ?? []).map((s) => s.trim()).filter(Boolean);
}

export function truncateWords(text: string, max: number): string {
  const words = text.trim().split(/\s+/);
  return words.length <= max ? text.trim() : words.slice(0, max).join(' ') + '…';
}

/** The most frequent non-trivial words, in first-seen order on ties. */
export function keywords(text: string, count: number): string[] {
  const freq = new Map<string, number>();
  for (const w of text.toLowerCase().match(/[\p{L}][\p{L}\p{N}'-]*/gu) ?? []) {
    if (w.length < 3 || STOPWORDS.has(w)) continue;
    freq.set(w, (freq.get(w) ?? 0) + 1);
  }
  return [...freq.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([w]) => w);
}

function wordCount(text: string): number {
  return text.trim() === '' ? 0 : text.trim().split(/\s+/).length;
}

const LIMITS: Record<Verbosity, { echoWords: number; toolChars: number; summarySentences: number }> = {
  low: { echoWords: 20, toolChars: 200, summarySentences: 1 },
  medium: { echoWords: 120, toolChars: 1000, summarySentences: 2 },
  high: { echoWords: 2000, toolChars: 4000, summarySentences: 4 },
};

function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max) + '…';
}

/** A result of a run in the sandbox or a shell, which sandbox-answer.ts reads. */
const isRunResult = (r: ToolResult): boolean => r.name !== undefined && (isCodeToolName(r.name) || isShellName(r.name));

export function composeAnswer(conv: Conversation, verbosity: Verbosity, rng: Rng): Answer {
  const answer = composeRaw(conv, verbosity, rng);
  return { ...answer, text: applyInstructions(answer.text, conv.instructions) };
}

function composeRaw(conv: Conversation, verbosity: Verbosity, rng: Rng): Answer {
  const limits = LIMITS[verbosity];
  const msg = conv.lastUserText.trim();

  if (conv.toolResults.length > 0 && conv.toolResults.every((r) => r.name === FILE_SEARCH_TOOL)) {
    return { intent: 'tool_result', text: fileSearchAnswer(conv.toolResults.map((r) => r.content), msg, verbosity) };
  }
  if (conv.toolResults.length > 0 && conv.toolResults.every((r) => r.name !== undefined && WEB_TOOLS.has(r.name))) {
    return { intent: 'tool_result', text: webAnswer(conv.toolResults, msg, QUOTES[verbosity].passages) };
  }
  if (conv.toolResults.length > 0 && conv.toolResults.every(isRunResult)) {
    const answers = conv.toolResults.map((r) => (r.name !== undefined && isCodeToolName(r.name) ? codeInterpreterAnswer(r, limits.toolChars) : shellAnswer(r, limits.toolChars)));
    return { intent: 'tool_result', text: answers.join('\n\n') };
  }
  if (conv.toolResults.length === 1) {
    const only = conv.toolResults[0]!;
    const from = verbosity === 'high' && only.name ? ` (from ${only.name})` : '';
    return { intent: 'tool_result', text: `The tool returned: ${clip(only.content, limits.toolChars)}${from}` };
  }
  if (conv.toolResults.length > 1) {
    const parts = conv.toolResults.map((r, i) => `${r.name ?? `call ${i + 1}`}: ${clip(r.content, limits.toolChars)}`);
    return { intent: 'tool_result', text: `The tools returned: ${parts.join('; ')}` };
  }

  if (msg === '') {
    return { intent: 'empty', text: withAttachments('I received no text.', conv, true) };
  }

  if (IDENTITY.test(msg)) {
    const text = [
      IDENTITY_LINE,
      verbosity !== 'low' &&
        'I answer simply: I echo or summarize your message, do arithmetic and describe myself, without any network access.',
      verbosity === 'high' && 'The same input and seed always give the same answer; real answers come from an upstream model configured by the operator.',
    ];
    return { intent: 'identity', text: join(text) };
  }

  const url = URL.exec(msg)?.[0];
  if (BROWSE.test(msg) || (url && URL_VERB.test(msg))) {
    const text = [
      verbosity === 'low'
        ? 'I cannot browse the web offline.'
        : 'I cannot browse the web or open URLs offline: I am the offline engine of agent-api and have no network access.',
      verbosity !== 'low' && url && `I did not open ${url}.`,
      verbosity === 'high' && 'Paste the text you want me to read into the conversation, or ask the operator to configure an upstream model with web access.',
    ];
    return { intent: 'browse', text: join(text) };
  }

  const say = SAY.exec(msg);
  if (say) return { intent: 'say', text: (say[1] as string).replace(/^["“](.*)["”]$/s, '$1') };

  if (GREETING.test(msg)) {
    const hello = rng.pick(['Hello!', 'Hi!', 'Hello there!']);
    return { intent: 'greeting', text: join([hello, verbosity !== 'low' && IDENTITY_LINE, 'How can I help?']) };
  }

  const summarize = SUMMARIZE.exec(msg);
  if (summarize) return { intent: 'summary', text: summary(summarize[1] || msg, verbosity, rng) };

  const arithmetic = findArithmetic(msg);
  if (arithmetic) {
    const { expression, value } = arithmetic;
    if (value === null) {
      return { intent: 'arithmetic', arithmetic, text: `${expression} has no value: it divides by zero.` };
    }
    const v = formatNumber(value);
    const main =
      verbosity === 'low'
        ? `${expression} = ${v}`
        : rng.pick([`${expression} = ${v}.`, `${expression} equals ${v}.`, `The answer is ${v} (${expression}).`]);
    const why = verbosity === 'high' && 'I evaluated it with the usual precedence: parentheses first, then powers, then * and /, then + and -.';
    return { intent: 'arithmetic', arithmetic, text: join([main, why]) };
  }

  return { intent: 'echo', text: withAttachments(echo(msg, verbosity, rng), conv, verbosity !== 'low') };
}

function echo(msg: string, verbosity: Verbosity, rng: Rng): string {
  const limits = LIMITS[verbosity];
  const lead = rng.pick(['You said', 'You wrote', 'Your message was']);
  const parts: (string | false)[] = [`${lead}: "${truncateWords(msg, limits.echoWords)}"`];
  const all = sentences(msg);
  if (verbosity !== 'low' && all.length > 1) parts.push(`In short: ${truncateWords(all[0] as string, 25)}`);
  if (verbosity === 'high') {
    const keys = keywords(msg, 5);
    if (keys.length > 0) parts.push(`Key words: ${keys.join(', ')}.`);
    parts.push(`It has ${wordCount(msg)} words in ${Math.max(1, all.length)} sentences.`);
    parts.push('(This is the offline engine of agent-api: it echoes and summarizes; configure an upstream model for real answers.)');
  }
  return join(parts);
}

function summary(text: string, verbosity: Verbosity, rng: Rng): string {
  const limits = LIMITS[verbosity];
  const picked = sentences(text).slice(0, limits.summarySentences).join(' ');
  const body = truncateWords(picked, verbosity === 'high' ? 120 : verbosity === 'medium' ? 60 : 25);
  const lead = verbosity === 'low' ? '' : rng.pick(['Summary: ', 'In short: ', 'The gist: ']);
  const parts: (string | false)[] = [lead + body];
  if (verbosity !== 'low') parts.push(`(${wordCount(text)} words.)`);
  if (verbosity === 'high') {
    const keys = keywords(text, 6);
    if (keys.length > 0) parts.push(`Key words: ${keys.join(', ')}.`);
  }
  return join(parts);
}

function withAttachments(text: string, conv: Conversation, mention: boolean): string {
  const { images, files, audio } = conv.attachments;
  const items = [
    images > 0 && `${images} image${images > 1 ? 's' : ''}`,
    files > 0 && `${files} file${files > 1 ? 's' : ''}`,
    audio > 0 && `${audio} audio clip${audio > 1 ? 's' : ''}`,
  ].filter(Boolean);
  if (!mention || items.length === 0) return text;
  return `${text} I also received ${items.join(' and ')}, which the offline engine does not look at.`;
}

function join(parts: readonly (string | false | undefined | null | '')[]): string {
  return parts.filter((p): p is string => typeof p === 'string' && p !== '').join(' ');
}

const QUOTES: Record<Verbosity, { passages: number; sentences: number; words: number }> = {
  low: { passages: 1, sentences: 1, words: 30 },
  medium: { passages: 3, sentences: 2, words: 50 },
  high: { passages: 3, sentences: 2, words: 90 },
};

/** A passage's first sentence or two (headings left out), with its double quotes made single. */
function quote(p: Passage, verbosity: Verbosity): string {
  const { sentences: count, words } = QUOTES[verbosity];
  return truncateWords(sentences(prose(p.text.slice(0, PASSAGE_CHARS))).slice(0, count).join(' '), words).replace(/"/g, "'");
}

/** Passages scoring under this share of the best one are not worth quoting beside it. */
const RELEVANT_SHARE = 0.5;

/**
 * The answer after file searches: the best passages (listed first, and scoring at least
 * half the best one's score) quoted, each followed by its [n] marker; or that nothing
 * was found, or that the search failed.
 */
export function fileSearchAnswer(results: readonly string[], question: string, verbosity: Verbosity): string {
  const passages = results.flatMap(readPassages).filter((p) => p.text !== '');
  if (passages.length === 0) {
    if (results.some((r) => r.startsWith('The file search failed'))) return 'The file search failed, so I could not look in the files.';
    return `Nothing was found in the files for "${truncateWords(searchQuery(question), 20).replace(/"/g, "'")}".`;
  }
  const best = Math.max(...passages.map((p) => p.score));
  return passages
    .filter((p) => p.score >= best * RELEVANT_SHARE)
    .slice(0, QUOTES[verbosity].passages)
    .map((p) => `From ${p.filename}: "${quote(p, verbosity)}" [${p.n}]`)
    .join('\n');
}
