// Web search backends behind one small interface (issue 20 item 4): SearxNG's JSON API
// (`/search?format=json`, which answers 403 until the instance enables the json format in
// its settings.yml `search.formats`), the Brave Search API (`/res/v1/web/search` with
// `X-Subscription-Token`), or an operator's module. Chosen by WEB_SEARCH_BACKEND,
// WEB_SEARCH_URL, WEB_SEARCH_API_KEY and WEB_SEARCH_MODULE. The backend is the operator's,
// so it is reached directly, not through the outbound guard; the pages its results link
// to are a caller's choice and are opened only through the guard. `allowedDomains` is
// enforced on the results here (a domain and its subdomains), whatever the backend did
// with it. A failure is a SearchFailed saying why, for the tool to report to the model.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fetch } from 'undici';

export interface SearchResult {
  url: string;
  title: string;
  snippet: string;
}

export interface UserLocation {
  country?: string;
  city?: string;
  region?: string;
  timezone?: string;
}

export interface SearchOptions {
  /** Results wanted (at most 20). */
  count: number;
  /** Only results on these domains or their subdomains. */
  allowedDomains?: readonly string[];
  userLocation?: UserLocation;
  signal?: AbortSignal;
}

export interface SearchBackend {
  /** `searxng`, `brave` or the module's own name, for logs. */
  readonly name: string;
  search(query: string, options: SearchOptions): Promise<SearchResult[]>;
}

/** Why a search gave nothing: said to the model, never a 500. */
export class SearchFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchFailed';
  }
}

const MAX_RESULTS = 20;
const TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** Whether `url` is on one of `domains` or a subdomain of one. */
export function onDomains(url: string, domains: readonly string[]): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return false;
  }
  return domains.some((d) => {
    const domain = d.toLowerCase().replace(/^\*?\./, '').replace(/\.$/, '');
    return host === domain || host.endsWith(`.${domain}`);
  });
}

/** Fetches a backend's JSON answer within the time and size caps. */
async function getJson(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined, what: string): Promise<unknown> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  let res;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new SearchFailed(timeout.aborted ? `${what} did not answer within ${TIMEOUT_MS / 1000} s.` : `${what} could not be reached.`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    const hint = res.status === 403 && what === 'SearxNG' ? ' (SearxNG answers 403 until its settings enable the json format)' : '';
    throw new SearchFailed(`${what} answered HTTP ${res.status}${hint}.`);
  }
  const text = await res.text();
  if (text.length > MAX_ANSWER_BYTES) throw new SearchFailed(`${what} answered more than ${MAX_ANSWER_BYTES} bytes.`);
  try {
    return JSON.parse(text);
  } catch {
    throw new SearchFailed(`${what} did not answer JSON.`);
  }
}

const text = (v: unknown, max = 2_000) => (typeof v === 'string' ? v.replace(/\s+/g, ' ').trim().slice(0, max) : '');
const httpUrl = (v: unknown) => typeof v === 'string' && /^https?:\/\//i.test(v);

/** Results kept: http(s) links only, each once, on the allowed domains, at most `count`. */
function keep(results: SearchResult[], options: SearchOptions): SearchResult[] {
  const seen = new Set<string>();
  const out: SearchResult[] = [];
  for (const r of results) {
    if (!httpUrl(r.url) || seen.has(r.url)) continue;
    if (options.allowedDomains?.length && !onDomains(r.url, options.allowedDomains)) continue;
    seen.add(r.url);
    out.push(r);
    if (out.length >= Math.min(options.count, MAX_RESULTS)) break;
  }
  return out;
}

/** With allowed domains, the query asks for them too (most engines read `site:`); the results are filtered anyway. */
const scoped = (query: string, domains?: readonly string[]) =>
  domains?.length ? `${query} ${domains.map((d) => `site:${d.replace(/^\*?\./, '')}`).join(' OR ')}` : query;

/** SearxNG takes no location; an API key, where a proxy in front of it wants one, goes as a bearer token. */
export function searxngBackend(baseUrl: string, apiKey?: string): SearchBackend {
  return {
    name: 'searxng',
    async search(query, options) {
      const url = new URL('search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
      url.searchParams.set('q', scoped(query, options.allowedDomains));
      url.searchParams.set('format', 'json');
      const body = (await getJson(url, apiKey ? { authorization: `Bearer ${apiKey}` } : {}, options.signal, 'SearxNG')) as { results?: unknown };
      if (!Array.isArray(body.results)) throw new SearchFailed('SearxNG answered without results.');
      return keep(
        body.results.map((r: { url?: unknown; title?: unknown; content?: unknown }) => ({ url: String(r.url ?? ''), title: text(r.title, 300), snippet: text(r.content) })),
        options,
      );
    },
  };
}

export function braveBackend(baseUrl: string, apiKey: string): SearchBackend {
  return {
    name: 'brave',
    async search(query, options) {
      const url = new URL('res/v1/web/search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
      url.searchParams.set('q', scoped(query, options.allowedDomains));
      url.searchParams.set('count', String(Math.min(MAX_RESULTS, Math.max(1, options.count))));
      const country = options.userLocation?.country;
      if (country && /^[A-Za-z]{2}$/.test(country)) url.searchParams.set('country', country.toUpperCase());
      const body = (await getJson(url, { 'x-subscription-token': apiKey }, options.signal, 'Brave Search')) as { web?: { results?: unknown } };
      const results = body.web?.results ?? [];
      if (!Array.isArray(results)) throw new SearchFailed('Brave Search answered without results.');
      return keep(
        results.map((r: { url?: unknown; title?: unknown; description?: unknown }) => ({ url: String(r.url ?? ''), title: text(r.title, 300), snippet: text(r.description) })),
        options,
      );
    },
  };
}

export interface SearchConfig {
  backend: 'searxng' | 'brave' | undefined;
  url: string | undefined;
  apiKey: string | undefined;
  module: string | undefined;
}

/**
 * The configured backend, or null when none is (the assistant then says it cannot
 * browse). A module (WEB_SEARCH_MODULE) exports `createSearchBackend()`.
 */
export async function loadSearchBackend(config: SearchConfig): Promise<SearchBackend | null> {
  if (config.module) {
    const mod = (await import(pathToFileURL(path.resolve(config.module)).href)) as { createSearchBackend?: () => SearchBackend | Promise<SearchBackend> };
    if (typeof mod.createSearchBackend !== 'function') throw new Error(`WEB_SEARCH_MODULE: ${config.module} has no createSearchBackend() export`);
    return mod.createSearchBackend();
  }
  if (!config.backend) return null;
  if (!config.url) throw new Error(`WEB_SEARCH_URL: required with WEB_SEARCH_BACKEND=${config.backend} (the backend's base URL)`);
  if (config.backend === 'brave') {
    if (!config.apiKey) throw new Error('WEB_SEARCH_API_KEY: required with WEB_SEARCH_BACKEND=brave (the subscription token)');
    return braveBackend(config.url, config.apiKey);
  }
  return searxngBackend(config.url, config.apiKey);
}
