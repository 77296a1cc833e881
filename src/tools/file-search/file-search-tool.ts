// The file_search hosted tool (SPEC "Hosted tools in /responses"): a service tool the
// agent loop runs, built per request over the request's vector stores and the caller's
// account. The model sees a function `file_search({query, queries?})`
// and reads back the passages found, numbered [1], [2], ... across the whole response,
// so its answer can cite them; the Responses layer shows each search as a
// `file_search_call` item (output-builder.ts) and each cited number as a
// `file_citation` annotation (api/responses/file-citations.ts).
import type { AgentTool, ToolOutput } from '../types.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { FunctionTool } from '../../providers/types.ts';
import type { AttributeFilter, Attributes, VectorSearch } from '../../retrieval/search-types.ts';

export const FILE_SEARCH_FUNCTION_NAME = 'file_search';

/** At most this many queries are searched per call (a model may list many phrasings). */
const MAX_QUERIES = 5;
const DEFAULT_MAX_RESULTS = 10;

/** What a request's file_search tool asks for (the contract has checked its members). */
export interface FileSearchConfig {
  vectorStoreIds: string[];
  maxResults: number;
  filters: AttributeFilter | null;
  scoreThreshold?: number;
}

export function fileSearchConfig(tool: Record<string, any>): FileSearchConfig {
  const threshold = tool.ranking_options?.score_threshold;
  return {
    vectorStoreIds: [...(tool.vector_store_ids as string[])],
    maxResults: typeof tool.max_num_results === 'number' ? tool.max_num_results : DEFAULT_MAX_RESULTS,
    filters: (tool.filters as AttributeFilter | null | undefined) ?? null,
    ...(typeof threshold === 'number' ? { scoreThreshold: threshold } : {}),
  };
}

/**
 * Every store a file_search tool names must be the caller's and not expired: refused
 * before any model runs, like every other argument of a tool (a foreign container is a
 * 404 too). Another account's id looks exactly like an unknown one.
 */
export async function checkVectorStores(search: VectorSearch, accountId: string, spec: { tool: Record<string, any>; at: string }): Promise<void> {
  const ids = spec.tool.vector_store_ids as string[];
  const states = await search.storeStates(accountId, ids);
  ids.forEach((id, j) => {
    const param = `${spec.at}.vector_store_ids[${j}]`;
    const state = states.get(id);
    if (state === undefined) throw notFound(`No vector store found with id '${id}'.`, param);
    if (state === 'expired') throw invalidRequest(`The vector store '${id}' has expired; create a new one.`, param);
  });
}

/** One passage found, as the item's `results` show it (the reference's FileSearchToolCall). */
export interface FileSearchResult {
  file_id: string;
  filename: string;
  score: number;
  attributes: Attributes | null;
  text: string;
}

/** What one search adds to its item: passage `i` of `results` is cited as [first + i]. */
export interface FileSearchData {
  queries: string[];
  status: 'completed' | 'failed';
  results: FileSearchResult[];
  first: number;
}

const DEFINITION: FunctionTool = {
  name: FILE_SEARCH_FUNCTION_NAME,
  description:
    "Searches the user's uploaded files for passages relevant to a query. The passages come back numbered; cite one by its number in brackets, like [1], right after what it supports.",
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'what to look for, in words likely to appear in the files' },
      queries: { type: 'array', items: { type: 'string' }, description: 'optional further phrasings, searched together with query' },
    },
    required: ['query'],
  },
};

/** The queries of a call's arguments: `query` then `queries`, trimmed, without repeats. */
export function queriesOf(argumentsJson: string): string[] {
  let args: unknown;
  try {
    args = JSON.parse(argumentsJson);
  } catch {
    return [];
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) return [];
  const { query, queries } = args as { query?: unknown; queries?: unknown };
  const all = [query, ...(Array.isArray(queries) ? queries : [])].filter((q): q is string => typeof q === 'string').map((q) => q.trim());
  return [...new Set(all.filter((q) => q !== ''))].slice(0, MAX_QUERIES);
}

/** A file name on one line of the text the model reads. */
const oneLine = (s: string) => s.replace(/[\r\n\t]+/g, ' ');

/** The text the model reads: each passage under its number, file name and score. */
export function resultsText(queries: readonly string[], results: readonly FileSearchResult[], first: number): string {
  const asked = queries.map((q) => JSON.stringify(q)).join(', ');
  if (results.length === 0) return `Nothing was found in the files for ${asked}.`;
  const passages = results.map((r, i) => `[${first + i}] ${oneLine(r.filename)} (score ${r.score.toFixed(2)})\n${r.text}`);
  return [`Found ${results.length} passage${results.length === 1 ? '' : 's'} in the files for ${asked}. Cite a passage as [n] right after what it supports.`, ...passages].join('\n\n');
}

export interface FileSearchLog {
  warn(obj: object, msg: string): void;
}

/**
 * The file_search service tool of one request. Passages are numbered on from the
 * previous call's, so every [n] of the response names one passage.
 */
export function fileSearchTool(search: VectorSearch, accountId: string, config: FileSearchConfig, log?: FileSearchLog): AgentTool {
  let numbered = 0;
  return {
    definition: DEFINITION,
    async run(argumentsJson, signal): Promise<ToolOutput> {
      const queries = queriesOf(argumentsJson);
      const first = numbered + 1;
      if (queries.length === 0) return { text: 'file_search needs a query: nothing was searched.', data: { queries, status: 'failed', results: [], first } satisfies FileSearchData };
      let found;
      try {
        found = await search.search(
          accountId,
          config.vectorStoreIds,
          {
            query: queries.length === 1 ? queries[0]! : queries,
            maxResults: config.maxResults,
            filters: config.filters,
            ...(config.scoreThreshold !== undefined ? { scoreThreshold: config.scoreThreshold } : {}),
          },
          signal,
        );
      } catch (err) {
        if (signal.aborted) throw err;
        // The model is told the search failed and the item says so; the cause goes to the log.
        log?.warn({ err }, 'file search failed');
        return { text: 'The file search failed: nothing could be searched.', data: { queries, status: 'failed', results: [], first } satisfies FileSearchData };
      }
      const results: FileSearchResult[] = found.slice(0, config.maxResults).map((r) => ({
        file_id: r.file_id,
        filename: r.filename,
        score: r.score,
        attributes: r.attributes ?? null,
        text: r.content.map((c) => c.text).join('\n'),
      }));
      numbered += results.length;
      return { text: resultsText(queries, results, first), data: { queries, status: 'completed', results, first } satisfies FileSearchData };
    },
  };
}
