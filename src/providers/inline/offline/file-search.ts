// The engine with a `file_search` tool (the service's own, offered by the agent loop
// for a Responses request with the file_search tool): it searches for what the user
// asked (tool-selection.ts), then answers by quoting the best passages found, each
// followed by the [n] marker the results gave it (answer.ts `fileSearchAnswer`), so the
// answer's citations point at real passages. It reads the results as the tool writes
// them (api/responses/file-search.ts `resultsText`): a header line
// `[n] filename (score s)` above each passage.
import type { FunctionTool } from '../../types.ts';

export const FILE_SEARCH_TOOL = 'file_search';

/**
 * How much of a search result the engine reads, from its start (the best passages come
 * first). More than READ_CHARS: passages are long, and reading them is linear (lines,
 * then the first sentences of at most PASSAGE_CHARS of each).
 */
export const SEARCH_READ_CHARS = 16_384;
/** Of each passage, the engine quotes from at most this much of its start. */
export const PASSAGE_CHARS = 1_000;

/** A function named file_search that takes a `query`. */
export function fileSearchTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => t.name === FILE_SEARCH_TOOL && typeof (t.parameters as { properties?: Record<string, unknown> } | undefined)?.properties?.query === 'object');
}

/** The query for a question: the user's words, on one line. */
export function searchQuery(message: string): string {
  return message.replace(/\s+/g, ' ').trim().slice(0, 1_000);
}

export interface Passage {
  n: number;
  filename: string;
  score: number;
  text: string;
}

const HEADER = /^\[(\d{1,4})\] (.*) \(score (\d+(?:\.\d+)?)\)$/;

/** The numbered passages of a search result, in the order given (best first). */
export function readPassages(content: string): Passage[] {
  const out: Passage[] = [];
  let current: { n: number; filename: string; score: number; lines: string[] } | undefined;
  let blank = true;
  for (const line of content.split('\n')) {
    const header = blank ? HEADER.exec(line) : null;
    if (header) {
      if (current) out.push(passage(current));
      current = { n: Number(header[1]), filename: header[2]!, score: Number(header[3]), lines: [] };
    } else current?.lines.push(line);
    blank = line.trim() === '';
  }
  if (current) out.push(passage(current));
  return out;
}

const passage = (p: { n: number; filename: string; score: number; lines: string[] }): Passage => ({ n: p.n, filename: p.filename, score: p.score, text: p.lines.join('\n').trim() });

/** A Markdown heading line (`# Title`): a label, not a sentence to quote. */
const HEADING = /^#{1,6}\s/;

/** A passage's text without its heading lines, unless it has nothing else. */
export function prose(text: string): string {
  const lines = text.split('\n');
  const kept = lines.filter((l) => !HEADING.test(l));
  return (kept.some((l) => l.trim() !== '') ? kept : lines).join('\n');
}
