// The engine with the service's web tools (tools/web-search/web-tools.ts): asked to look
// something up, it searches with the user's words and answers from the top results,
// each cited as a Markdown link to its URL; given a URL to read, it opens the page and
// answers from its text, citing it the same way. It reads the tools' results as they
// write them: `[n] Title` / `URL: ...` / snippet per search result, and `Page: <url>` /
// `Title: <title>` above a page's text. Without a web_search tool (no backend) a
// look-up falls to answer.ts's plain "I cannot browse".
import type { FunctionTool } from '../../types.ts';

export const WEB_SEARCH_TOOL = 'web_search';
export const OPEN_PAGE_TOOL = 'open_page';
export const FIND_IN_PAGE_TOOL = 'find_in_page';
export const WEB_TOOLS: ReadonlySet<string> = new Set([WEB_SEARCH_TOOL, OPEN_PAGE_TOOL, FIND_IN_PAGE_TOOL]);

/** How much of a web result the engine reads, from its start (the best results and the page's start come first). */
export const WEB_READ_CHARS = 16_384;

const takes = (t: FunctionTool, param: string) => typeof (t.parameters as { properties?: Record<string, unknown> } | undefined)?.properties?.[param] === 'object';

/** A function named web_search that takes a `query`. */
export function webSearchTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => t.name === WEB_SEARCH_TOOL && takes(t, 'query'));
}

/** A function named open_page that takes a `url`. */
export function openPageTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => t.name === OPEN_PAGE_TOOL && takes(t, 'url'));
}

/** Asking to look something up on the web (not merely mentioning search). */
const LOOKUP =
  /\bsearch\s+(?:the\s+)?(?:web|internet|online|for)\b|\blook\s+up\b|\blookup\b|\bgoogle\b|\bfind\s+(?:out|online)\b|\bbrowse\b|\b(?:latest|current|today'?s|recent|this week'?s)\s+(?:news|headlines|version|release|price|weather|score)s?\b/i;
/** What a look-up request says before its subject. */
const LEAD =
  /^\s*(?:please\s+|can you\s+|could you\s+)*(?:search(?:\s+(?:the\s+)?(?:web|internet|online))?(?:\s+for)?|look\s+up|lookup|google(?:\s+for)?|find\s+out|find\s+online|browse(?:\s+for)?)\s*[:,-]?\s*/i;
const URL = /https?:\/\/[^\s<>"'`)\]]{1,2048}/;

/** The query a look-up asks for: the message without its lead words, on one line. */
export function lookupQuery(message: string): string | undefined {
  const text = message.replace(/\s+/g, ' ').trim();
  if (!LOOKUP.test(text)) return undefined;
  const query = text.replace(LEAD, '').replace(/[?.!]+$/, '').trim();
  return (query || text).slice(0, 400);
}

/** The URL a message asks to read, if any. */
export function urlIn(message: string): string | undefined {
  return URL.exec(message)?.[0]?.replace(/[.,;:!?]+$/, '');
}

interface SearchHit {
  n: number;
  title: string;
  url: string;
  snippet: string;
}

/** The numbered results of a web_search result text. */
function readHits(content: string): SearchHit[] {
  const out: SearchHit[] = [];
  for (const block of content.split('\n\n')) {
    const m = /^\[(\d{1,3})\] ([^\n]*)\nURL: (\S+)\n?([\s\S]*)$/.exec(block);
    if (m) out.push({ n: Number(m[1]), title: m[2]!.trim(), url: m[3]!, snippet: m[4]!.trim() });
  }
  return out;
}

const link = (title: string, url: string) => `[${title.replace(/[[\]]/g, '')}](${url})`;
const firstSentences = (text: string, count: number, words: number) => {
  const s = (text.replace(/\s+/g, ' ').trim().match(/[^.!?]+(?:[.!?]+|$)/g) ?? []).map((x) => x.trim()).filter(Boolean);
  const all = s.slice(0, count).join(' ').split(' ');
  return all.length <= words ? all.join(' ') : `${all.slice(0, words).join(' ')}…`;
};

/** The sentences of a page that share the most words with the question (in page order), else its first ones. */
function relevant(text: string, question: string, count: number): string {
  const asked = new Set((question.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []).filter((w) => !/^https?$/.test(w)));
  const all = (text.slice(0, WEB_READ_CHARS).replace(/\s+/g, ' ').match(/[^.!?]+(?:[.!?]+|$)/g) ?? []).map((x) => x.trim()).filter((x) => x.length > 20);
  const scored = all.map((s, i) => ({ s, i, score: (s.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? []).filter((w) => asked.has(w)).length }));
  const best = scored.filter((x) => x.score > 0).sort((a, b) => b.score - a.score || a.i - b.i).slice(0, count).sort((a, b) => a.i - b.i);
  const chosen = (best.length > 0 ? best : scored.slice(0, count)).map((x) => x.s).join(' ');
  const words = chosen.split(' ');
  return words.length <= 120 ? chosen : `${words.slice(0, 120).join(' ')}…`;
}

/**
 * The answer after web calls: the top results quoted with their links, a page's most
 * relevant sentences with its link, or what went wrong, said plainly.
 */
export function webAnswer(results: readonly { name: string | undefined; content: string }[], question: string, hits: number): string {
  const parts: string[] = [];
  for (const r of results) {
    const content = r.content.slice(0, WEB_READ_CHARS);
    if (/^The web search failed/.test(content)) parts.push('The web search did not work, so I could not look this up.');
    else if (/^Nothing was found on the web/.test(content)) parts.push(content.split('\n')[0]!);
    else if (/^The page \S+ could not be opened/.test(content) || /^The page \S+ is outside/.test(content)) parts.push(`${content.split(/\. (?:Say so|Say that)/)[0]}.`);
    else if (content.startsWith('Web results for ')) {
      const found = readHits(content).slice(0, hits);
      parts.push(found.map((h) => `${h.title}: ${firstSentences(h.snippet, 1, 40) || h.title} ${link(h.title, h.url)}`).join('\n'));
    } else if (content.startsWith('Page: ')) {
      const m = /^Page: (\S+)\nTitle: ([^\n]*)\n\n([\s\S]*)$/.exec(content);
      if (!m) continue;
      const [, url, title, body] = m;
      const text = relevant(body!.replace(/\n\nCite each source[\s\S]*$/, ''), question, 3);
      parts.push(text ? `From ${link(title!, url!)}: ${text}` : `The page ${link(title!, url!)} has no text I could read.`);
    } else if (/^\d+ match(?:es)? of /.test(content)) {
      const m = /^\d+ match(?:es)? of .* in (\S+) \((.*)\):\n\n([\s\S]*?)(?:\n\nCite each source[\s\S]*)?$/.exec(content);
      if (m) parts.push(`In ${link(m[2]!, m[1]!)}: ${m[3]!.split('\n\n')[0]}`);
    } else parts.push(content.split('\n')[0]!);
  }
  return parts.filter(Boolean).join('\n\n') || 'The web tools gave nothing to answer from.';
}
