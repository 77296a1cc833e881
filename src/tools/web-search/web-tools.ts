// The web tools the agent loop runs for the assistant (SPEC "What the service does" item
// 7) and for a Responses request's hosted `web_search` tool (item 5): `web_search` (when
// a search backend is configured), `open_page` and `find_in_page`. The model reads
// numbered results and pages as text and cites a source as a Markdown link to its URL;
// the surfaces turn those links into `url_citation` annotations (citations.ts). Every
// page is fetched through the outbound guard; results and pages outside the allowed
// domains are dropped or refused. A failure is told to the model, never a 500.
import type { OutboundGuard } from '../../outbound/guard.ts';
import type { FunctionTool } from '../../providers/types.ts';
import { argumentsObject, type AgentTool, type ToolOutput } from '../types.ts';
import { findInPage } from '../web-page/find-in-page.ts';
import { PageFailed, type Page } from '../web-page/page-text.ts';
import { readPage } from '../web-page/read-page.ts';
import { onDomains, SearchFailed, type SearchBackend, type UserLocation } from './backends.ts';

export const WEB_SEARCH_FUNCTION_NAME = 'web_search';
export const OPEN_PAGE_FUNCTION_NAME = 'open_page';
export const FIND_IN_PAGE_FUNCTION_NAME = 'find_in_page';
export const WEB_FUNCTION_NAMES: ReadonlySet<string> = new Set([WEB_SEARCH_FUNCTION_NAME, OPEN_PAGE_FUNCTION_NAME, FIND_IN_PAGE_FUNCTION_NAME]);

/** A source the answer may cite: what the url_citation annotation names. */
export interface WebSource {
  url: string;
  title: string;
}

export type WebAction = { type: 'search'; query: string; queries: string[] } | { type: 'open_page'; url: string } | { type: 'find_in_page'; url: string; pattern: string };

/** What one web tool call adds to its item (a Responses `web_search_call`) and to the citable sources. */
export interface WebCallData {
  kind: 'web';
  action: WebAction;
  status: 'completed' | 'failed';
  sources: WebSource[];
}

export type ContextSize = 'low' | 'medium' | 'high';

export interface WebToolsConfig {
  /** Results and pages only on these domains or their subdomains (empty: any). */
  allowedDomains: readonly string[];
  userLocation?: UserLocation;
  contextSize: ContextSize;
  /** Fee per search and per page opened (USD), each charged as a run of its own. */
  searchFeeUsd?: number;
  pageFeeUsd?: number;
  /** At most this many calls of each web tool in one request. */
  maxUses?: number;
}

export interface WebToolsDeps {
  backend: SearchBackend | null;
  guard: OutboundGuard;
  log?: { warn(obj: object, msg: string): void };
}

/** How much a search and a page give the model, by search_context_size. */
const CONTEXT: Record<ContextSize, { results: number; pageChars: number }> = {
  low: { results: 3, pageChars: 4_000 },
  medium: { results: 5, pageChars: 10_000 },
  high: { results: 10, pageChars: 20_000 },
};

const SNIPPET_CHARS = 400;
/** How much of a page is read (and kept for find_in_page within the request). */
const FIND_CHARS = 200_000;
const CITE =
  'Cite each source you use as a Markdown link to its URL, like [title](https://example.com/page), right after what it supports. Use only what these results say.';

const SEARCH_DEFINITION: FunctionTool = {
  name: WEB_SEARCH_FUNCTION_NAME,
  description: 'Searches the web. Returns numbered results, each a title, its URL and a snippet. Use it for anything current or that you do not know.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: 'what to search for, as a search engine query' } },
    required: ['query'],
  },
};

const OPEN_DEFINITION: FunctionTool = {
  name: OPEN_PAGE_FUNCTION_NAME,
  description: 'Opens a web page (an https URL from the user or from search results) and returns its text.',
  parameters: {
    type: 'object',
    properties: { url: { type: 'string', description: 'the https URL of the page' } },
    required: ['url'],
  },
};

const FIND_DEFINITION: FunctionTool = {
  name: FIND_IN_PAGE_FUNCTION_NAME,
  description: 'Finds a phrase in a web page and returns the passages around each match.',
  parameters: {
    type: 'object',
    properties: { url: { type: 'string', description: 'the https URL of the page' }, pattern: { type: 'string', description: 'the text to look for' } },
    required: ['url', 'pattern'],
  },
};

/** The action a web call's arguments name, before it runs (the item shows it as it opens). */
export function webActionOf(name: string, argumentsJson: string): WebAction {
  const args = argumentsObject(argumentsJson);
  if (name === OPEN_PAGE_FUNCTION_NAME) return { type: 'open_page', url: stringArg(args, 'url') };
  if (name === FIND_IN_PAGE_FUNCTION_NAME) return { type: 'find_in_page', url: stringArg(args, 'url'), pattern: stringArg(args, 'pattern').slice(0, 200) };
  const query = stringArg(args, 'query');
  return { type: 'search', query, queries: query ? [query] : [] };
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const stringArg = (args: Record<string, unknown>, name: string) => (typeof args[name] === 'string' ? oneLine(args[name] as string).slice(0, 2_000) : '');

/**
 * The web tools of one request. `web_search` only with a backend. Pages opened in this
 * request are kept for find_in_page (a few, the latest), so a find does not fetch again.
 */
export function webTools(deps: WebToolsDeps, config: WebToolsConfig): AgentTool[] {
  const context = CONTEXT[config.contextSize];
  const domains = config.allowedDomains;
  const pages = new Map<string, Page>();
  const keep = (url: string, page: Page) => {
    pages.set(url, page);
    if (pages.size > 4) pages.delete(pages.keys().next().value!);
  };
  const done = (text: string, action: WebAction, sources: WebSource[] = []): ToolOutput => ({ text, data: { kind: 'web', action, status: 'completed', sources } satisfies WebCallData });
  const failed = (text: string, action: WebAction): ToolOutput => ({ text, data: { kind: 'web', action, status: 'failed', sources: [] } satisfies WebCallData });
  const outside = (url: string) => domains.length > 0 && !onDomains(url, domains);

  /** A page by URL: this request's copy or fetched through the guard. */
  const open = async (url: string, signal: AbortSignal): Promise<Page> => {
    const had = pages.get(url);
    if (had) return had;
    // Read far enough for find_in_page; open_page shows the model only its context's share.
    const page = await readPage(deps.guard, url, { signal, maxChars: FIND_CHARS });
    keep(url, page);
    if (page.url !== url) keep(page.url, page);
    return page;
  };
  const pageFailure = (err: unknown, signal: AbortSignal): string => {
    if (signal.aborted) throw err;
    if (err instanceof PageFailed) return err.message;
    deps.log?.warn({ err }, 'open_page failed');
    return 'the page could not be read';
  };

  const search: AgentTool = {
    definition: SEARCH_DEFINITION,
    ...(config.searchFeeUsd !== undefined ? { feeUsd: config.searchFeeUsd } : {}),
    async run(argumentsJson, signal) {
      const query = stringArg(argumentsObject(argumentsJson), 'query');
      const action: WebAction = { type: 'search', query, queries: query ? [query] : [] };
      if (!query) return failed('web_search needs a query: nothing was searched.', action);
      let results;
      try {
        results = await deps.backend!.search(query, { count: context.results, allowedDomains: domains, ...(config.userLocation ? { userLocation: config.userLocation } : {}), signal });
      } catch (err) {
        if (signal.aborted) throw err;
        const why = err instanceof SearchFailed ? err.message : 'the search backend failed';
        if (!(err instanceof SearchFailed)) deps.log?.warn({ err }, 'web search failed');
        return failed(`The web search failed: ${why}. Say that the search did not work; do not make up results.`, action);
      }
      const shown = results.slice(0, context.results);
      if (shown.length === 0) return done(`Nothing was found on the web for ${JSON.stringify(query)}.`, action);
      const lines = shown.map((r, i) => `[${i + 1}] ${oneLine(r.title) || r.url}\nURL: ${r.url}\n${oneLine(r.snippet).slice(0, SNIPPET_CHARS)}`);
      return done([`Web results for ${JSON.stringify(query)}:`, ...lines, CITE].join('\n\n'), action, shown.map((r) => ({ url: r.url, title: oneLine(r.title) || r.url })));
    },
  };

  const openPage: AgentTool = {
    definition: OPEN_DEFINITION,
    ...(config.pageFeeUsd !== undefined ? { feeUsd: config.pageFeeUsd } : {}),
    async run(argumentsJson, signal) {
      const url = stringArg(argumentsObject(argumentsJson), 'url');
      const action: WebAction = { type: 'open_page', url };
      if (!url) return failed('open_page needs a url: nothing was opened.', action);
      if (outside(url)) return failed(`The page ${url} is outside the domains this search may use (${domains.join(', ')}).`, action);
      let page: Page;
      try {
        page = await open(url, signal);
      } catch (err) {
        return failed(`The page ${url} could not be opened: ${pageFailure(err, signal)}. Say so; do not guess its content.`, action);
      }
      // A redirect may have led off the allowed domains.
      if (outside(page.url)) return failed(`The page ${url} led to ${page.url}, outside the domains this search may use.`, action);
      const title = page.title ? oneLine(page.title) : page.url;
      const shown = page.text.length > context.pageChars ? page.text.slice(0, context.pageChars) : page.text;
      const cut = page.truncated || shown.length < page.text.length;
      const body = shown.trim() === '' ? '(the page has no text)' : shown;
      const text = [`Page: ${page.url}\nTitle: ${title}`, body + (cut ? '\n[... the rest of the page was cut]' : ''), CITE].join('\n\n');
      return done(text, action, [{ url: page.url, title }]);
    },
  };

  const find: AgentTool = {
    definition: FIND_DEFINITION,
    ...(config.pageFeeUsd !== undefined ? { feeUsd: config.pageFeeUsd } : {}),
    async run(argumentsJson, signal) {
      const args = argumentsObject(argumentsJson);
      const url = stringArg(args, 'url');
      const pattern = stringArg(args, 'pattern').slice(0, 200);
      const action: WebAction = { type: 'find_in_page', url, pattern };
      if (!url || !pattern) return failed('find_in_page needs a url and a pattern.', action);
      if (outside(url)) return failed(`The page ${url} is outside the domains this search may use (${domains.join(', ')}).`, action);
      let page: Page;
      try {
        page = await open(url, signal);
      } catch (err) {
        return failed(`The page ${url} could not be opened: ${pageFailure(err, signal)}.`, action);
      }
      if (outside(page.url)) return failed(`The page ${url} led to ${page.url}, outside the domains this search may use.`, action);
      const { matches } = findInPage(page, pattern);
      const title = page.title ? oneLine(page.title) : page.url;
      if (matches.length === 0) return done(`${JSON.stringify(pattern)} does not occur in ${page.url}.`, action);
      const text = [`${matches.length} match${matches.length === 1 ? '' : 'es'} of ${JSON.stringify(pattern)} in ${page.url} (${title}):`, ...matches.map((m) => `... ${oneLine(m.excerpt)} ...`), CITE].join('\n\n');
      return done(text, action, [{ url: page.url, title }]);
    },
  };

  const tools = [...(deps.backend ? [search] : []), openPage, find];
  return config.maxUses === undefined ? tools : tools.map((t) => ({ ...t, maxUses: config.maxUses }));
}

/** Said to the model when it may not search: no backend, or the request turned live access off. */
export const CANNOT_SEARCH = 'Web search is not available: you cannot search the web or look anything up online. If asked to, say so plainly.';
