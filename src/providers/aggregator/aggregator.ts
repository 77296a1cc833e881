// The gateway's upstream model aggregator (OpenRouter's API shape): one kept-alive
// connection pool to the configured base URL, requests sent with the upstream key in
// place of the caller's, the models' prices from its /models (cached, refreshed in the
// background), and a generation's final cost from its /generation. The host comes only
// from configuration (GATEWAY_UPSTREAM_URL), never from a caller, so it is not an
// outbound-guarded address.
import { Agent, type Dispatcher } from 'undici';
import { SecretScrubber } from '../../secrets.ts';

export interface AggregatorConfig {
  url: string;
  key: string | undefined;
  referer: string | undefined;
  title: string | undefined;
  timeoutMs: number;
  modelsRefreshMs: number;
}

/** A model's price from the upstream's /models, in dollars. */
export interface ModelPrice {
  /** Dollars per input (prompt) token. */
  prompt: number;
  /** Dollars per output (completion) token. */
  completion: number;
  /** Dollars per request, charged once. */
  request: number;
  /** The model's output cap (top_provider.max_completion_tokens, else its context length), when it has one. */
  maxCompletionTokens: number | null;
}

export interface GenerationCost {
  totalCost: number;
  tokensPrompt: number | null;
  tokensCompletion: number | null;
}

/** Response headers that describe one connection, never passed on (RFC 9110 §7.6.1). */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authenticate', 'proxy-authorization']);

/**
 * The caller's request headers not sent upstream: its credentials (the upstream key
 * replaces them), what describes its own connection or route to us, and what we set
 * ourselves (the body's length; identity encoding, so the tee can read usage).
 */
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'host',
  'authorization',
  'x-api-key',
  'cookie',
  'content-length',
  'accept-encoding',
  'expect',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'x-client-request-id',
]);

const dollars = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : typeof v === 'number' ? v : NaN;
  return Number.isFinite(n) && n >= 0 ? n : null;
};

export class Aggregator {
  readonly origin: string;
  readonly basePath: string;
  readonly scrubber: SecretScrubber;
  private readonly pool: Agent;
  private prices = new Map<string, ModelPrice>();
  private pricesAt = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly config: AggregatorConfig) {
    const url = new URL(config.url);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.scrubber = new SecretScrubber([config.key]);
    // Headers must come within the timeout, and a stream may be idle no longer than it.
    this.pool = new Agent({ headersTimeout: config.timeoutMs, bodyTimeout: config.timeoutMs, keepAliveTimeout: 10_000, connections: 256 });
  }

  /**
   * The headers sent upstream for a caller's request: its own, less the ones above and
   * those its Connection header names (hop-by-hop too, RFC 9110 §7.6.1), plus the
   * upstream key and attribution.
   */
  upstreamHeaders(caller: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    const connection = [caller.connection ?? []].flat().join(',');
    const named = new Set(connection.split(',').map((n) => n.trim().toLowerCase()));
    for (const name in caller) {
      const value = caller[name];
      if (value === undefined || NOT_FORWARDED.has(name) || named.has(name)) continue;
      out[name] = value;
    }
    this.ownHeaders(out);
    return out;
  }

  private ownHeaders(out: Record<string, string | string[]>): void {
    if (this.config.key) out.authorization = `Bearer ${this.config.key}`;
    if (this.config.referer) out['http-referer'] = this.config.referer;
    if (this.config.title) out['x-title'] = this.config.title;
    out['accept-encoding'] = 'identity';
  }

  /** Sends one request to `path` (relative to the base URL, query included); the body streams back. */
  send(opts: { method: string; path: string; headers: Record<string, string | string[]>; body?: Buffer; signal: AbortSignal }): Promise<Dispatcher.ResponseData> {
    return this.pool.request({
      origin: this.origin,
      path: this.basePath + opts.path,
      method: opts.method as Dispatcher.HttpMethod,
      headers: opts.body ? { ...opts.headers, 'content-length': String(opts.body.length) } : opts.headers,
      ...(opts.body ? { body: opts.body } : {}),
      signal: opts.signal,
    });
  }

  /** A JSON GET of our own (prices, generations): the status and the parsed body (null when not JSON). */
  private async getJson(path: string, signal: AbortSignal): Promise<{ status: number; body: any }> {
    const headers: Record<string, string | string[]> = { accept: 'application/json' };
    this.ownHeaders(headers);
    const res = await this.pool.request({ origin: this.origin, path: this.basePath + path, method: 'GET', headers, signal });
    const text = await res.body.text();
    try {
      return { status: res.statusCode, body: JSON.parse(text) };
    } catch {
      return { status: res.statusCode, body: null };
    }
  }

  /**
   * A model's price, from the upstream's /models (loaded once, then refreshed in the
   * background when older than the refresh interval); null for a model it does not list
   * or prices it does not give. A failed load keeps the prices known before.
   */
  async price(model: string | null, signal: AbortSignal): Promise<ModelPrice | null> {
    if (this.pricesAt === 0) await this.loadPrices(signal);
    else if (Date.now() - this.pricesAt > this.config.modelsRefreshMs) void this.loadPrices(AbortSignal.timeout(this.config.timeoutMs));
    return model === null ? null : (this.prices.get(model) ?? null);
  }

  private loadPrices(signal: AbortSignal): Promise<void> {
    this.loading ??= (async () => {
      try {
        const { status, body } = await this.getJson('/models', signal);
        if (status !== 200 || !Array.isArray(body?.data)) return;
        const prices = new Map<string, ModelPrice>();
        for (const m of body.data) {
          if (typeof m?.id !== 'string' || typeof m.pricing !== 'object' || m.pricing === null) continue;
          const prompt = dollars(m.pricing.prompt);
          const completion = dollars(m.pricing.completion);
          if (prompt === null || completion === null) continue;
          // The output cap a request without max_tokens is reserved for: the model's, else its context.
          const cap = [m.top_provider?.max_completion_tokens, m.top_provider?.context_length, m.context_length].find((n) => Number.isSafeInteger(n) && n > 0);
          const price: ModelPrice = { prompt, completion, request: dollars(m.pricing.request) ?? 0, maxCompletionTokens: cap ?? null };
          prices.set(m.id, price);
          if (typeof m.canonical_slug === 'string') prices.set(m.canonical_slug, price);
        }
        this.prices = prices;
        this.pricesAt = Date.now();
      } catch {
        // Unreachable now: requests reserve the default until a later load succeeds.
        if (this.pricesAt === 0) this.pricesAt = Date.now() - this.config.modelsRefreshMs + 10_000;
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  /** A generation's final cost from the upstream's /generation; null while it does not know it yet (it answers 404 for a while). */
  async generationCost(id: string, signal: AbortSignal): Promise<GenerationCost | null> {
    const { status, body } = await this.getJson(`/generation?id=${encodeURIComponent(id)}`, signal);
    if (status !== 200) return null;
    const total = dollars(body?.data?.total_cost);
    if (total === null) return null;
    const int = (v: unknown) => (Number.isSafeInteger(v) ? (v as number) : null);
    return { totalCost: total, tokensPrompt: int(body.data.tokens_prompt), tokensCompletion: int(body.data.tokens_completion) };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
