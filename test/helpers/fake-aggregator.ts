// A fake upstream aggregator shaped like OpenRouter's API (`https://openrouter.ai/api/v1`), for
// the gateway's tests and bench: an in-process node:http server on 127.0.0.1 that answers what
// OpenRouter answers, in OpenRouter's shapes (checked against @openrouter/sdk 1.3.19's response
// schemas, @openrouter/ai-sdk-provider 2.9.1's and OpenRouter's docs and OpenAPI document), and
// records every request it got and every byte it sent, so a test can prove the gateway forwarded
// both ways unchanged.
//
// Routes under /api/v1: POST /chat/completions, /completions (JSON or SSE), /embeddings,
// /audio/speech (raw bytes), /audio/transcriptions (JSON with base64 `input_audio`, or
// multipart), /images (JSON or SSE); GET /models, /models/{author}/{slug}/endpoints,
// /images/models, /images/models/{author}/{slug}/endpoints, /generation?id=, /key, /credits.
//
// Per request behaviour, from the model name (it is in the body, which a gateway forwards
// unchanged) or from a `behavior` function:
//   fake/error-<status>    OpenRouter's error body with that status (402, 429 with Retry-After, 502, ...)
//   fake/mid-stream-error  a stream that sends two chunks, then OpenRouter's mid-stream error event
//   fake/slow              a long stream with a pause between events (to disconnect mid-way)
//   fake/no-cost           usage without `cost` (the cost only comes from GET /generation)
//   fake/no-usage          no usage at all
// Any other model name is answered too; one absent from /models simply has no known price.
//
// No artificial latency unless asked (it also stands as the upstream in a bench: `record: false`
// keeps nothing per request; fake-aggregator-main.ts runs it in a process of its own).
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';

/** Dollars per token (or per request, image, ...), as decimal strings, as OpenRouter sends them. "-1": no fixed price (routers). */
export interface Pricing {
  prompt: string;
  completion: string;
  request?: string;
  image?: string;
  web_search?: string;
  internal_reasoning?: string;
  input_cache_read?: string;
  input_cache_write?: string;
  audio?: string;
}

export interface FakeModel {
  id: string;
  name?: string;
  description?: string;
  /** `null`: listed with OpenRouter's router prices ("-1"), i.e. no price known before the call. */
  pricing: Pricing | null;
  context_length?: number;
  /** `top_provider.max_completion_tokens`. */
  max_completion_tokens?: number | null;
  input_modalities?: string[];
  output_modalities?: string[];
  supported_parameters?: string[];
}

/** OpenRouter's error object: `{error: {code, message, metadata?}}`, `code` is the HTTP status. */
export interface FakeError {
  code: number;
  message: string;
  metadata?: Record<string, unknown>;
}

/** What the fake does with one request. Every field is optional; unset ones take the defaults. */
export interface Behavior {
  /** Answer this error, status `error.code`, before anything is generated. */
  error?: FakeError;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** The generated text; streamed one word per chunk. */
  text?: string;
  promptTokens?: number;
  completionTokens?: number;
  /** The generation's cost in dollars (what /generation reports as `total_cost`). Default: tokens times the model's pricing, else `defaultCost`. */
  cost?: number;
  /** `false`: usage is sent without `cost`, so the cost is only known through GET /generation. */
  reportCost?: boolean;
  /** `false`: no usage at all in the answer. */
  reportUsage?: boolean;
  /** `: OPENROUTER PROCESSING` comments before the first event of a stream (default 1). */
  keepAlives?: number;
  /** Pause between stream events, in ms (default 0). */
  chunkDelayMs?: number;
  /** End the stream with the mid-stream error event after this many content chunks. */
  failAfterChunks?: number;
  midStreamError?: FakeError;
  /** Send `data: [DONE]` after a mid-stream error event (default false: OpenRouter ends the stream with the error event). */
  doneAfterError?: boolean;
  /** GET /generation answers 404 for this many lookups of this generation, and/or for this many ms after it. */
  generationNotFoundLookups?: number;
  generationNotFoundMs?: number;
  /** The bytes /audio/speech answers. */
  audio?: Buffer;
}

export interface FakeAggregatorOptions {
  /** The only bearer key accepted (401 otherwise). Default: any non-empty bearer key. */
  apiKey?: string;
  models?: FakeModel[];
  /** Decides the behaviour of each generation request, after the model-name conventions. */
  behavior?: (r: Received) => Behavior | undefined;
  /** Defaults for GET /generation's early 404s (default 0 and 0: found at once). */
  generationNotFoundLookups?: number;
  generationNotFoundMs?: number;
  /** Pause between events of a `fake/slow` stream (default 100 ms) and its number of chunks (default 100). */
  slowChunkDelayMs?: number;
  slowChunks?: number;
  /** Cost of a generation whose model has no price (default 0.0001 dollars). */
  defaultCost?: number;
  /** gzip-encode answers to requests that accept it (as OpenRouter's CDN can). Default false. */
  gzip?: boolean;
  /** Overrides of GET /key's `data`. */
  key?: Partial<KeyData>;
  /** GET /credits' `total_credits` (default 100); `total_usage` is `usageBase` plus what the fake's generations cost. */
  totalCredits?: number;
  usageBase?: number;
  /** The `provider` the answers name (default "FakeProvider", a name in OpenRouter's own provider list). */
  provider?: string;
  /** Port to listen on (default: a free one). */
  port?: number;
  /** `false`: keep no requests nor answer bytes (a bench's long run); `received`, `sent` and `waitFor` stay empty. Default true. */
  record?: boolean;
  /** Generations kept for GET /generation, oldest dropped first (default 100000). */
  maxGenerations?: number;
}

/** One request as the fake received it. */
export interface Received {
  seq: number;
  method: string;
  /** The raw request target, e.g. `/api/v1/generation?id=gen-1`. */
  url: string;
  /** Without the query string. */
  path: string;
  /** The query string without `?`, `''` if none. */
  query: string;
  /** Lower-cased names (node's parsed view). */
  headers: http.IncomingHttpHeaders;
  /** Names as sent, in order: [name, value, name, value, ...]. */
  rawHeaders: string[];
  body: Buffer;
  /** SHA-256 of `body`, hex. */
  sha256: string;
  /** The client went away before the answer was complete. */
  aborted: boolean;
  /** The generation this request was answered under (generation endpoints only). */
  generationId?: string;
  response: Sent;
  /** Resolves once the answer is complete or the client went away. */
  done: Promise<void>;
}

/** One answer as the fake sent it. */
export class Sent {
  status = 0;
  headers: Record<string, string> = {};
  /** Every write of the body, in order, before any content-encoding (what a client reads). */
  readonly writes: Buffer[] = [];
  /** The bytes on the wire, after content-encoding (same as `body` without gzip). */
  readonly wireWrites: Buffer[] = [];
  /** The whole answer was written and ended. */
  complete = false;
  generationId?: string;
  /** `usage.cost` as reported in the body or the final chunk; `null` when not reported. */
  reportedCost: number | null = null;
  /** What GET /generation reports as `total_cost` (after an abort: what was generated until then). */
  totalCost = 0;

  get body(): Buffer {
    return Buffer.concat(this.writes);
  }
  get sha256(): string {
    return sha256(this.body);
  }
  get wire(): Buffer {
    return Buffer.concat(this.wireWrites);
  }
}

/** GET /key's `data`, every field @openrouter/sdk 1.3.19 requires. */
export interface KeyData {
  label: string;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: string | null;
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  byok_usage: number;
  byok_usage_daily: number;
  byok_usage_weekly: number;
  byok_usage_monthly: number;
  include_byok_in_limit: boolean;
  is_free_tier: boolean;
  is_management_key: boolean;
  is_provisioning_key: boolean;
  creator_user_id: string | null;
  expires_at: string | null;
  rate_limit: { requests: number; interval: string; note: string };
  allowed_data_regions: string[];
  free_model_daily_requests: { limit: number; remaining: number; used: number };
  organization_id: string | null;
  workspace_id: string | null;
}

export interface FakeAggregator {
  /** `http://127.0.0.1:PORT/api/v1` */
  url: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  received: Received[];
  /** Answers by generation id. */
  sent: Map<string, Sent>;
  /** GET /generation's `data` by generation id (there even while /generation still answers 404). */
  generations: { get(id: string): GenerationData | undefined; readonly size: number };
  models: FakeModel[];
  /** Replace the behaviour function (undefined: conventions only). */
  setBehavior(fn: ((r: Received) => Behavior | undefined) | undefined): void;
  /** Resolves with the first received request (already there or to come) that satisfies `pred`. */
  waitFor(pred: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Forget what was received and sent (generations stay answerable). */
  clear(): void;
  close(): Promise<void>;
}

export type GenerationData = ReturnType<typeof generationData>;

const DONE = 'data: [DONE]\n\n';
const KEEP_ALIVE = ': OPENROUTER PROCESSING\n\n';
// 1x1 transparent PNG.
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export const DEFAULT_MODELS: FakeModel[] = [
  {
    id: 'openai/gpt-4o-mini',
    name: 'OpenAI: GPT-4o-mini',
    pricing: { prompt: '0.00000015', completion: '0.0000006', request: '0', image: '0.000217', web_search: '0', internal_reasoning: '0', input_cache_read: '0.000000075' },
    context_length: 128000,
    max_completion_tokens: 16384,
    input_modalities: ['text', 'image', 'file'],
  },
  {
    id: 'anthropic/claude-3.5-haiku',
    name: 'Anthropic: Claude 3.5 Haiku',
    pricing: { prompt: '0.0000008', completion: '0.000004', request: '0', image: '0', web_search: '0', internal_reasoning: '0' },
    context_length: 200000,
    max_completion_tokens: 8192,
  },
  {
    // A router: listed, but with no price known before the call.
    id: 'openrouter/auto',
    name: 'Auto Router',
    pricing: null,
    context_length: 2000000,
    max_completion_tokens: null,
  },
  {
    id: 'openai/text-embedding-3-small',
    name: 'OpenAI: Text Embedding 3 Small',
    pricing: { prompt: '0.00000002', completion: '0' },
    context_length: 8192,
    max_completion_tokens: null,
    output_modalities: ['embeddings'],
    supported_parameters: ['dimensions', 'encoding_format'],
  },
  {
    id: 'openai/gpt-4o-mini-tts',
    name: 'OpenAI: GPT-4o mini TTS',
    pricing: { prompt: '0.0000006', completion: '0.000012' },
    context_length: 2000,
    max_completion_tokens: null,
    output_modalities: ['speech'],
    supported_parameters: ['voice', 'response_format', 'speed'],
  },
  {
    id: 'openai/whisper-1',
    name: 'OpenAI: Whisper',
    pricing: { prompt: '0.0000025', completion: '0.00001' },
    context_length: 0,
    max_completion_tokens: null,
    input_modalities: ['audio'],
    output_modalities: ['transcription'],
    supported_parameters: ['language', 'temperature', 'response_format'],
  },
  {
    id: 'openai/gpt-image-1',
    name: 'OpenAI: GPT Image 1',
    pricing: { prompt: '0.000005', completion: '0.00004', image: '0.01' },
    context_length: 32000,
    max_completion_tokens: null,
    input_modalities: ['text', 'image'],
    output_modalities: ['image'],
    supported_parameters: ['size', 'quality', 'n'],
  },
];

const ERROR_MESSAGES: Record<number, string> = {
  400: 'Invalid request parameters',
  401: 'No auth credentials found',
  402: 'Insufficient credits. Add more using https://openrouter.ai/credits',
  403: 'Your chosen model requires moderation and your input was flagged',
  404: 'Not Found',
  408: 'Request timed out',
  429: 'Rate limit exceeded',
  500: 'Internal Server Error',
  502: 'Provider returned error',
  503: 'No allowed providers are available for the selected model.',
};

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
const EMPTY_SHA256 = sha256(Buffer.alloc(0));

/** OpenRouter's error body for a status. */
export function openRouterError(code: number, message?: string, metadata?: Record<string, unknown>): FakeError {
  const e: FakeError = { code, message: message ?? ERROR_MESSAGES[code] ?? `Error ${code}` };
  if (metadata) e.metadata = metadata;
  else if (code === 502) e.metadata = { provider_name: 'FakeProvider', raw: '{"error":{"message":"upstream overloaded"}}' };
  else if (code === 429) e.metadata = { error_type: 'rate_limit_exceeded' };
  return e;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// Unique per process and start: 12 random characters, then a counter.
const ID_PREFIX = Array.from(randomBytes(12), (b) => ALNUM[b % ALNUM.length]).join('');
let idCounter = 0;
/** OpenRouter's generation id shape: `gen-<unix seconds>-<20 letters and digits>`. */
function generationId(): string {
  let n = ++idCounter;
  let tail = '';
  for (let i = 0; i < 8; i++, n = Math.floor(n / 62)) tail = ALNUM[n % 62] + tail;
  return `gen-${Math.floor(Date.now() / 1000)}-${ID_PREFIX}${tail}`;
}

function price(p: string | undefined): number {
  const n = p === undefined ? 0 : Number(p);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Short decimal (no 4.4999999e-6 noise from the products). */
function roundCost(x: number): number {
  return Number(x.toPrecision(12));
}

function tokensOf(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The prompt text of a chat, completion, embeddings, speech or image body. */
function promptText(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const add = (v: unknown): void => {
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(add);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.text === 'string') parts.push(o.text);
      if (o.content !== undefined) add(o.content);
    }
  };
  add(body.messages);
  add(body.prompt);
  add(body.input);
  return parts.join('\n');
}

function modelPricing(m: FakeModel): Pricing {
  return m.pricing ?? { prompt: '-1', completion: '-1' };
}

function modelEntry(m: FakeModel, created: number) {
  const output = m.output_modalities ?? ['text'];
  const input = m.input_modalities ?? ['text'];
  return {
    id: m.id,
    canonical_slug: m.id,
    hugging_face_id: null,
    name: m.name ?? m.id,
    created,
    description: m.description ?? `${m.name ?? m.id}, served by the fake aggregator.`,
    context_length: m.context_length ?? null,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: input,
      output_modalities: output,
      tokenizer: 'Other',
      instruct_type: null,
    },
    pricing: modelPricing(m),
    top_provider: { context_length: m.context_length ?? null, max_completion_tokens: m.max_completion_tokens ?? null, is_moderated: false },
    per_request_limits: null,
    supported_parameters: m.supported_parameters ?? ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'tools', 'tool_choice', 'response_format'],
    default_parameters: null,
    supported_voices: null,
    expiration_date: null,
    knowledge_cutoff: null,
    links: { details: `/api/v1/models/${m.id}/endpoints` },
  };
}

function endpointEntry(m: FakeModel, provider: string) {
  return {
    name: `${provider} | ${m.id}`,
    model_id: m.id,
    model_name: m.name ?? m.id,
    context_length: m.context_length ?? 0,
    pricing: modelPricing(m),
    provider_name: provider,
    tag: provider.toLowerCase(),
    quantization: 'unknown',
    max_completion_tokens: m.max_completion_tokens ?? null,
    max_prompt_tokens: null,
    supported_parameters: m.supported_parameters ?? ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'tools', 'tool_choice', 'response_format'],
    status: 0,
    uptime_last_30m: 100,
    uptime_last_5m: 100,
    uptime_last_1d: 100,
    supports_implicit_caching: false,
    supports_tool_choice: { auto: true, none: true, required: true, function: true },
    latency_last_30m: null,
    throughput_last_30m: null,
  };
}

/** What the fake keeps of a generation (compact: a bench makes many); GET /generation builds its answer from it. */
interface GenerationEntry {
  id: string;
  model: string;
  provider: string;
  apiType: string;
  createdMs: number;
  totalCost: number;
  promptTokens: number;
  completionTokens: number;
  streamed: boolean;
  cancelled: boolean;
  finishReason: string | null;
  userAgent: string | null;
  httpReferer: string | null;
  lookups: number;
  notFoundLookups: number;
  notFoundMs: number;
}

/** GET /generation's `data` (every field @openrouter/sdk 1.3.19 requires). */
function generationData(g: GenerationEntry) {
  return {
    id: g.id,
    upstream_id: `chatcmpl-${g.id.slice(-12)}`,
    total_cost: g.totalCost,
    cache_discount: null,
    upstream_inference_cost: null,
    created_at: new Date(g.createdMs).toISOString(),
    model: g.model,
    app_id: null,
    streamed: g.streamed,
    cancelled: g.cancelled,
    provider_name: g.provider,
    latency: 0,
    moderation_latency: null,
    generation_time: 0,
    finish_reason: g.finishReason,
    native_finish_reason: g.finishReason,
    tokens_prompt: g.promptTokens,
    tokens_completion: g.completionTokens,
    native_tokens_prompt: g.promptTokens,
    native_tokens_completion: g.completionTokens,
    native_tokens_completion_images: null,
    native_tokens_reasoning: 0,
    native_tokens_cached: 0,
    num_media_prompt: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_search_results: null,
    num_fetches: null,
    origin: g.httpReferer ?? '',
    usage: g.totalCost,
    is_byok: false,
    api_type: g.apiType,
    data_region: 'global',
    external_user: null,
    http_referer: g.httpReferer,
    preset_id: null,
    provider_responses: null,
    router: null,
    service_tier: null,
    user_agent: g.userAgent,
    web_search_engine: null,
    workspace_id: null,
  };
}

/** Deterministic bytes from a seed (audio that is not text, so a gateway that decodes it breaks it). */
function seededBytes(seed: string, n: number): Buffer {
  const out = Buffer.alloc(n);
  let block = createHash('sha256').update(seed).digest();
  for (let i = 0; i < n; i += block.length) {
    block.copy(out, i, 0, Math.min(block.length, n - i));
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

function embeddingOf(text: string, dims: number): number[] {
  const b = seededBytes(`emb:${text}`, dims * 2);
  const v: number[] = [];
  // Values exactly representable in float32, so a base64 round trip gives them back.
  for (let i = 0; i < dims; i++) v.push((b.readUInt16LE(i * 2) - 32768) / 32768);
  return v;
}

function float32Base64(v: number[]): string {
  const b = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => b.writeFloatLE(x, i * 4));
  return b.toString('base64');
}

/** The `model` field of a multipart body (enough to pick a behaviour; the fake does not need the rest). */
function multipartModel(body: Buffer): string | undefined {
  const m = /name="model"\r\n(?:[^\r\n]*\r\n)*?\r\n([^\r\n]*)\r\n/.exec(body.toString('latin1'));
  return m?.[1];
}

export async function startFakeAggregator(opts: FakeAggregatorOptions = {}): Promise<FakeAggregator> {
  const models = opts.models ?? DEFAULT_MODELS;
  const provider = opts.provider ?? 'FakeProvider';
  const created = 1_700_000_000;
  let behavior = opts.behavior;
  let seq = 0;
  let spent = 0;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const generationEntries = new Map<string, GenerationEntry>();
  const recording = opts.record !== false;
  const maxGenerations = opts.maxGenerations ?? 100_000;

  const fake: FakeAggregator = {
    url: '',
    origin: '',
    received: [],
    sent: new Map(),
    generations: {
      get: (id) => {
        const e = generationEntries.get(id);
        return e && generationData(e);
      },
      get size() {
        return generationEntries.size;
      },
    },
    models,
    setBehavior(fn) {
      behavior = fn;
    },
    waitFor(pred, timeoutMs = 30_000) {
      return new Promise<Received>((resolve, reject) => {
        const check = (): boolean => {
          const r = fake.received.find(pred);
          if (!r) return false;
          clearTimeout(timer);
          events.off('change', onChange);
          resolve(r);
          return true;
        };
        const onChange = (): void => void check();
        const timer = setTimeout(() => {
          events.off('change', onChange);
          reject(new Error(`fake aggregator: nothing matched within ${timeoutMs} ms`));
        }, timeoutMs);
        events.on('change', onChange);
        check();
      });
    },
    clear() {
      fake.received.length = 0;
      fake.sent.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const findModel = (id: string): FakeModel | undefined => models.find((m) => m.id === id);

  /** The model that ends up answering: a router resolves to the first priced text model. */
  const resolveModel = (id: string): string => {
    const m = findModel(id);
    if (m && m.pricing === null) return models.find((x) => x.pricing !== null && (x.output_modalities ?? ['text']).includes('text'))?.id ?? id;
    return id;
  };

  const costOf = (model: string, promptTokens: number, completionTokens: number): number => {
    const m = findModel(model);
    if (!m?.pricing) return opts.defaultCost ?? 0.0001;
    const p = m.pricing;
    return roundCost(price(p.prompt) * promptTokens + price(p.completion) * completionTokens + price(p.request));
  };

  /** The conventions by model name, then the behaviour function. */
  const behaviorFor = (r: Received, model: string): Behavior => {
    const b: Behavior = {};
    const err = /^fake\/error-(\d{3})$/.exec(model);
    if (err) {
      const code = Number(err[1]);
      b.error = openRouterError(code);
      if (code === 429) b.headers = { 'Retry-After': '1' };
    } else if (model === 'fake/mid-stream-error') {
      b.failAfterChunks = 2;
    } else if (model === 'fake/slow') {
      b.chunkDelayMs = opts.slowChunkDelayMs ?? 100;
      b.text = Array.from({ length: opts.slowChunks ?? 100 }, (_, i) => `w${i}`).join(' ');
    } else if (model === 'fake/no-cost') {
      b.reportCost = false;
    } else if (model === 'fake/no-usage') {
      b.reportUsage = false;
    }
    return { ...b, ...(behavior?.(r) ?? {}) };
  };

  const sendJson = (r: Received, res: http.ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void => {
    const text = JSON.stringify(value);
    const gzip = opts.gzip === true && /\bgzip\b/.test(String(r.headers['accept-encoding'] ?? ''));
    const w = open(r, res, status, { 'Content-Type': 'application/json', ...(gzip ? {} : { 'Content-Length': String(Buffer.byteLength(text)) }), ...headers });
    w.end(text);
  };

  const sendError = (r: Received, res: http.ServerResponse, e: FakeError, headers: Record<string, string> = {}): void =>
    sendJson(r, res, e.code, { error: e }, headers);

  /** Starts an answer: status and headers, a body writer that records every byte in order. */
  const open = (r: Received, res: http.ServerResponse, status: number, headers: Record<string, string>) => {
    const sent = r.response;
    const gzip = opts.gzip === true && /\bgzip\b/.test(String(r.headers['accept-encoding'] ?? ''));
    const all = { ...headers, ...(gzip ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : {}) };
    sent.status = status;
    sent.headers = all;
    res.writeHead(status, all);
    let gz: zlib.Gzip | undefined;
    if (gzip) {
      gz = zlib.createGzip();
      gz.on('data', (c: Buffer) => {
        if (recording) sent.wireWrites.push(c);
        if (!res.destroyed) res.write(c);
      });
      gz.on('end', () => {
        if (!res.destroyed) res.end();
      });
    }
    return {
      write(chunk: string | Buffer): void {
        if (res.destroyed) return;
        if (recording) {
          const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          sent.writes.push(b);
          if (!gz) sent.wireWrites.push(b);
        }
        if (gz) {
          gz.write(chunk);
          // Each event leaves at once, as a stream must.
          gz.flush(zlib.constants.Z_SYNC_FLUSH);
        } else res.write(chunk);
      },
      /** Ends the answer, with a last chunk written in the same call (one write for a whole JSON answer). */
      end(chunk?: string | Buffer): void {
        if (res.destroyed) return;
        if (chunk !== undefined && recording) {
          const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          sent.writes.push(b);
          if (!gz) sent.wireWrites.push(b);
        }
        // A string goes out with the headers in one write (a Buffer would take a writev).
        if (gz) {
          if (chunk !== undefined) gz.end(chunk);
          else gz.end();
        } else if (chunk !== undefined) res.end(chunk);
        else res.end();
      },
    };
  };

  const registerGeneration = (
    r: Received,
    b: Behavior,
    g: { id: string; model: string; apiType: string; promptTokens: number; completionTokens: number; cost: number; streamed: boolean; finishReason: string | null },
  ): GenerationEntry => {
    const entry: GenerationEntry = {
      id: g.id,
      model: g.model,
      provider,
      apiType: g.apiType,
      createdMs: Date.now(),
      totalCost: g.cost,
      promptTokens: g.promptTokens,
      completionTokens: g.completionTokens,
      streamed: g.streamed,
      cancelled: false,
      finishReason: g.finishReason,
      userAgent: (r.headers['user-agent'] as string | undefined) ?? null,
      httpReferer: (r.headers['http-referer'] as string | undefined) ?? null,
      lookups: 0,
      notFoundLookups: b.generationNotFoundLookups ?? opts.generationNotFoundLookups ?? 0,
      notFoundMs: b.generationNotFoundMs ?? opts.generationNotFoundMs ?? 0,
    };
    generationEntries.set(g.id, entry);
    if (generationEntries.size > maxGenerations) {
      const oldest = generationEntries.keys().next().value as string;
      generationEntries.delete(oldest);
      fake.sent.delete(oldest);
    }
    r.generationId = g.id;
    r.response.generationId = g.id;
    r.response.totalCost = g.cost;
    if (recording) fake.sent.set(g.id, r.response);
    spent = roundCost(spent + g.cost);
    return entry;
  };

  /** The figures of a text generation: tokens, text pieces, cost. */
  const textGeneration = (body: Record<string, unknown>, b: Behavior) => {
    const requested = typeof body.model === 'string' ? body.model : '';
    const model = resolveModel(requested);
    const words = (b.text ?? 'Hello from the fake aggregator.').split(' ');
    const cap = typeof body.max_tokens === 'number' ? body.max_tokens : typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : undefined;
    const cut = cap !== undefined && cap >= 0 && cap < words.length;
    const pieces = (cut ? words.slice(0, cap) : words).map((w, i) => (i === 0 ? w : ` ${w}`));
    const promptTokens = b.promptTokens ?? tokensOf(promptText(body));
    const completionTokens = b.completionTokens ?? pieces.length;
    const cost = b.cost ?? costOf(model, promptTokens, completionTokens);
    return { model, pieces, promptTokens, completionTokens, cost, finishReason: cut ? 'length' : 'stop' };
  };

  const usageObject = (model: string, promptTokens: number, completionTokens: number, cost: number, b: Behavior): Record<string, unknown> | undefined => {
    if (b.reportUsage === false) return undefined;
    const m = findModel(model);
    const promptCost = m?.pricing ? roundCost(price(m.pricing.prompt) * promptTokens) : 0;
    const u: Record<string, unknown> = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
    if (b.reportCost !== false) u.cost = cost;
    u.is_byok = false;
    u.prompt_tokens_details = { cached_tokens: 0, cache_write_tokens: 0, audio_tokens: 0, video_tokens: 0 };
    if (b.reportCost !== false) {
      u.cost_details = { upstream_inference_cost: null, upstream_inference_prompt_cost: promptCost, upstream_inference_completions_cost: roundCost(cost - promptCost) };
    }
    u.completion_tokens_details = { reasoning_tokens: 0, image_tokens: 0 };
    return u;
  };

  /** POST /chat/completions and /completions. */
  const completion = async (r: Received, res: http.ServerResponse, body: Record<string, unknown>, chat: boolean): Promise<void> => {
    const b = behaviorFor(r, String(body.model ?? ''));
    if (b.error) return sendError(r, res, b.error, b.headers);
    const g = textGeneration(body, b);
    const id = generationId();
    const createdAt = Math.floor(Date.now() / 1000);
    const stream = body.stream === true;
    const failAfter = b.failAfterChunks;
    const failing = failAfter !== undefined && failAfter < g.pieces.length;
    const pieces = failing ? g.pieces.slice(0, failAfter) : g.pieces;
    const completionTokens = failing ? pieces.length : g.completionTokens;
    const cost = failing && b.cost === undefined ? costOf(g.model, g.promptTokens, completionTokens) : g.cost;
    const finishReason = failing ? 'error' : g.finishReason;
    const entry = registerGeneration(r, b, { id, model: g.model, apiType: 'completions', promptTokens: g.promptTokens, completionTokens, cost, streamed: stream, finishReason });
    const usage = usageObject(g.model, g.promptTokens, completionTokens, cost, b);
    r.response.reportedCost = usage && typeof usage.cost === 'number' && !(stream && failing) ? usage.cost : null;
    const midError = b.midStreamError ?? { code: 502, message: 'Provider disconnected unexpectedly', metadata: { error_type: 'provider_unavailable' } };
    const head = { id, provider, model: g.model, object: chat ? 'chat.completion.chunk' : 'text_completion', created: createdAt };
    const headers = { 'X-Generation-Id': id, ...(b.headers ?? {}) };

    if (!stream) {
      const text = pieces.join('');
      const choice: Record<string, unknown> = chat
        ? { logprobs: null, finish_reason: finishReason, native_finish_reason: finishReason, index: 0, message: { role: 'assistant', content: text, refusal: null, reasoning: null } }
        : { text, index: 0, logprobs: null, finish_reason: finishReason, native_finish_reason: finishReason };
      // OpenRouter embeds a provider error that cut the generation short in the choice.
      if (failing) choice.error = midError;
      const answer: Record<string, unknown> = { ...head, object: chat ? 'chat.completion' : 'text_completion', choices: [choice], system_fingerprint: null };
      if (usage) answer.usage = usage;
      sendJson(r, res, 200, answer, headers);
      return;
    }

    const w = open(r, res, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...headers });
    const delay = b.chunkDelayMs ?? 0;
    const pause = async (): Promise<boolean> => {
      if (delay > 0) await sleep(delay);
      return !res.destroyed;
    };
    for (let i = 0; i < (b.keepAlives ?? 1); i++) {
      w.write(KEEP_ALIVE);
      if (!(await pause())) break;
    }
    const choice = (text: string, finish: string | null) =>
      chat
        ? { index: 0, delta: { role: 'assistant', content: text }, finish_reason: finish, native_finish_reason: finish, logprobs: null }
        : { text, index: 0, logprobs: null, finish_reason: finish, native_finish_reason: finish };
    let written = 0;
    // The client went away: OpenRouter bills what was generated until then and marks it cancelled
    // (on 'close', so it is recorded by the time `done` resolves).
    res.once('close', () => {
      if (res.writableFinished) return;
      const partial = b.cost ?? costOf(g.model, g.promptTokens, written);
      spent = roundCost(spent - cost + partial);
      Object.assign(entry, { cancelled: true, finishReason: null, completionTokens: written, totalCost: partial });
      r.response.totalCost = partial;
    });
    for (const piece of pieces) {
      if (res.destroyed) return;
      w.write(`data: ${JSON.stringify({ ...head, choices: [choice(piece, null)] })}\n\n`);
      written++;
      if (!(await pause())) return;
    }
    if (failing) {
      // OpenRouter's mid-stream error: a chunk with a top-level `error` and a choice finished by "error"; no usage follows.
      w.write(`data: ${JSON.stringify({ ...head, error: midError, choices: [{ ...choice('', 'error'), ...(chat ? { delta: { content: '' } } : {}) }] })}\n\n`);
      if (b.doneAfterError) w.write(DONE);
      w.end();
      return;
    }
    w.write(`data: ${JSON.stringify({ ...head, choices: [choice('', finishReason)] })}\n\n`);
    if (usage) {
      if (!(await pause())) return;
      // Usage comes once, in the final chunk before [DONE], with an empty choices array.
      w.write(`data: ${JSON.stringify({ ...head, choices: [], usage })}\n\n`);
    }
    w.write(DONE);
    w.end();
  };

  const embeddings = (r: Received, res: http.ServerResponse, body: Record<string, unknown>): void => {
    const b = behaviorFor(r, String(body.model ?? ''));
    if (b.error) return sendError(r, res, b.error, b.headers);
    const model = String(body.model ?? '');
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    const dims = typeof body.dimensions === 'number' && body.dimensions > 0 && body.dimensions <= 4096 ? body.dimensions : 8;
    const base64 = body.encoding_format === 'base64';
    const promptTokens = b.promptTokens ?? tokensOf(promptText(body));
    const cost = b.cost ?? costOf(model, promptTokens, 0);
    const id = generationId();
    registerGeneration(r, b, { id, model, apiType: 'embeddings', promptTokens, completionTokens: 0, cost, streamed: false, finishReason: null });
    const answer: Record<string, unknown> = {
      id,
      object: 'list',
      data: inputs.map((input, index) => {
        const v = embeddingOf(typeof input === 'string' ? input : JSON.stringify(input), dims);
        return { object: 'embedding', embedding: base64 ? float32Base64(v) : v, index };
      }),
      model,
      provider,
    };
    if (b.reportUsage !== false) {
      answer.usage = { prompt_tokens: promptTokens, total_tokens: promptTokens, ...(b.reportCost !== false ? { cost } : {}) };
      r.response.reportedCost = b.reportCost !== false ? cost : null;
    }
    sendJson(r, res, 200, answer, { 'X-Generation-Id': id, ...(b.headers ?? {}) });
  };

  const speech = async (r: Received, res: http.ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const b = behaviorFor(r, String(body.model ?? ''));
    if (b.error) return sendError(r, res, b.error, b.headers);
    if (typeof body.input !== 'string' || typeof body.model !== 'string') return sendError(r, res, openRouterError(400, '`model` and `input` are required'));
    const model = body.model;
    const format = typeof body.response_format === 'string' ? body.response_format : 'pcm';
    const audio = b.audio ?? seededBytes(`speech:${body.input}`, 16 * 1024);
    // TTS is priced per character of input.
    const promptTokens = b.promptTokens ?? body.input.length;
    const cost = b.cost ?? costOf(model, promptTokens, 0);
    const id = generationId();
    registerGeneration(r, b, { id, model, apiType: 'tts', promptTokens, completionTokens: 0, cost, streamed: false, finishReason: null });
    const type = format === 'mp3' ? 'audio/mpeg' : format === 'pcm' ? 'audio/pcm' : `audio/${format}`;
    const w = open(r, res, 200, { 'Content-Type': type, 'X-Generation-Id': id, ...(b.headers ?? {}) });
    // A byte stream, several writes.
    const delay = b.chunkDelayMs ?? 0;
    for (let i = 0; i < audio.length; i += 4096) {
      if (res.destroyed) return;
      w.write(audio.subarray(i, i + 4096));
      if (delay > 0) await sleep(delay);
    }
    w.end();
  };

  const transcription = (r: Received, res: http.ServerResponse, body: Record<string, unknown> | undefined): void => {
    const model = body ? String(body.model ?? '') : (multipartModel(r.body) ?? '');
    const b = behaviorFor(r, model);
    if (b.error) return sendError(r, res, b.error, b.headers);
    let audioBytes: number;
    if (body) {
      const ia = body.input_audio as { data?: unknown; format?: unknown } | undefined;
      if (!ia || typeof ia.data !== 'string' || typeof ia.format !== 'string') return sendError(r, res, openRouterError(400, '`input_audio` with `data` (base64) and `format` is required'));
      audioBytes = Buffer.from(ia.data, 'base64').length;
    } else {
      audioBytes = r.body.length;
    }
    // As if 16 kHz 16-bit mono.
    const seconds = Math.round((audioBytes / 32000) * 100) / 100;
    const text = b.text ?? 'Hello from the fake aggregator.';
    const promptTokens = b.promptTokens ?? Math.max(1, Math.ceil(seconds * 10));
    const completionTokens = b.completionTokens ?? tokensOf(text);
    const cost = b.cost ?? costOf(model, promptTokens, completionTokens);
    const id = generationId();
    registerGeneration(r, b, { id, model, apiType: 'stt', promptTokens, completionTokens, cost, streamed: false, finishReason: null });
    const answer: Record<string, unknown> = { text };
    if (b.reportUsage !== false) {
      answer.usage = { seconds, input_tokens: promptTokens, output_tokens: completionTokens, total_tokens: promptTokens + completionTokens, ...(b.reportCost !== false ? { cost } : {}) };
      r.response.reportedCost = b.reportCost !== false ? cost : null;
    }
    sendJson(r, res, 200, answer, { 'X-Generation-Id': id, ...(b.headers ?? {}) });
  };

  const images = async (r: Received, res: http.ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const b = behaviorFor(r, String(body.model ?? ''));
    if (b.error) return sendError(r, res, b.error, b.headers);
    const model = String(body.model ?? '');
    const n = typeof body.n === 'number' && body.n >= 1 && body.n <= 10 ? body.n : 1;
    const promptTokens = b.promptTokens ?? 0;
    const completionTokens = b.completionTokens ?? 272 * n;
    const m = findModel(model);
    const cost = b.cost ?? (m?.pricing ? roundCost(price(m.pricing.image) * n + price(m.pricing.completion) * completionTokens) : (opts.defaultCost ?? 0.0001));
    const id = generationId();
    const createdAt = Math.floor(Date.now() / 1000);
    registerGeneration(r, b, { id, model, apiType: 'image', promptTokens, completionTokens, cost, streamed: body.stream === true, finishReason: null });
    const usage = b.reportUsage === false ? undefined : { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, ...(b.reportCost !== false ? { cost } : {}) };
    r.response.reportedCost = usage && b.reportCost !== false ? cost : null;
    const headers = { 'X-Generation-Id': id, ...(b.headers ?? {}) };
    if (body.stream !== true) {
      const answer: Record<string, unknown> = { created: createdAt, data: Array.from({ length: n }, () => ({ b64_json: PNG_1X1, media_type: 'image/png' })) };
      if (usage) answer.usage = usage;
      sendJson(r, res, 200, answer, headers);
      return;
    }
    const w = open(r, res, 200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...headers });
    for (let i = 0; i < (b.keepAlives ?? 1); i++) w.write(KEEP_ALIVE);
    w.write(`data: ${JSON.stringify({ type: 'image_generation.partial_image', partial_image_index: 0, b64_json: PNG_1X1 })}\n\n`);
    if (b.chunkDelayMs) await sleep(b.chunkDelayMs);
    if (res.destroyed) return;
    w.write(`data: ${JSON.stringify({ type: 'image_generation.completed', b64_json: PNG_1X1, media_type: 'image/png', created: createdAt, ...(usage ? { usage } : {}) })}\n\n`);
    w.write(DONE);
    w.end();
  };

  const generationLookup = (r: Received, res: http.ServerResponse, params: URLSearchParams): void => {
    const id = params.get('id');
    if (!id) return sendError(r, res, openRouterError(400, 'Missing required query parameter: id'));
    const entry = generationEntries.get(id);
    // OpenRouter answers 404 for a while after a generation, until its stats are recorded.
    if (!entry) return sendError(r, res, openRouterError(404, `Generation ${id} not found`));
    entry.lookups++;
    if (entry.lookups <= entry.notFoundLookups || Date.now() - entry.createdMs < entry.notFoundMs) {
      return sendError(r, res, openRouterError(404, `Generation ${id} not found`));
    }
    sendJson(r, res, 200, { data: generationData(entry) });
  };

  const keyInfo = (r: Received, res: http.ServerResponse): void => {
    const auth = String(r.headers.authorization ?? '');
    const secret = auth.replace(/^Bearer\s+/i, '');
    const data: KeyData = {
      label: `${secret.slice(0, 11)}...${secret.slice(-3)}`,
      limit: null,
      limit_remaining: null,
      limit_reset: null,
      usage: spent,
      usage_daily: spent,
      usage_weekly: spent,
      usage_monthly: spent,
      byok_usage: 0,
      byok_usage_daily: 0,
      byok_usage_weekly: 0,
      byok_usage_monthly: 0,
      include_byok_in_limit: false,
      is_free_tier: false,
      is_management_key: false,
      is_provisioning_key: false,
      creator_user_id: 'user_fake0000000000000000000',
      expires_at: null,
      rate_limit: { requests: -1, interval: '10s', note: 'This field is deprecated and safe to ignore.' },
      allowed_data_regions: ['global'],
      free_model_daily_requests: { limit: 1000, remaining: 1000, used: 0 },
      organization_id: null,
      workspace_id: null,
      ...opts.key,
    };
    sendJson(r, res, 200, { data });
  };

  const route = async (r: Received, res: http.ServerResponse): Promise<void> => {
    const params = new URLSearchParams(r.query);
    const p = r.path.startsWith('/api/v1/') ? r.path.slice('/api/v1'.length) : null;
    if (p === null) return sendError(r, res, openRouterError(404));
    const auth = String(r.headers.authorization ?? '');
    const bearer = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
    if (!bearer) return sendError(r, res, openRouterError(401, 'No auth credentials found'));
    if (opts.apiKey !== undefined && bearer !== opts.apiKey) return sendError(r, res, openRouterError(401, 'User not found.'));

    if (r.method === 'GET') {
      if (p === '/models') return sendJson(r, res, 200, { data: models.map((m) => modelEntry(m, created)), links: { next: null }, total_count: models.length });
      const ep = /^\/(images\/)?models\/([^/]+)\/([^/]+)\/endpoints$/.exec(p);
      if (ep) {
        const id = `${decodeURIComponent(ep[2] ?? '')}/${decodeURIComponent(ep[3] ?? '')}`;
        const m = findModel(id);
        if (!m) return sendError(r, res, openRouterError(404, `No endpoints found for ${id}.`));
        const e = modelEntry(m, created);
        return sendJson(r, res, 200, { data: { id: m.id, name: e.name, created, description: e.description, architecture: e.architecture, endpoints: [endpointEntry(m, provider)] } });
      }
      if (p === '/images/models') {
        const list = models.filter((m) => (m.output_modalities ?? []).includes('image'));
        return sendJson(r, res, 200, {
          data: list.map((m) => ({
            id: m.id,
            name: m.name ?? m.id,
            created,
            description: modelEntry(m, created).description,
            architecture: { input_modalities: m.input_modalities ?? ['text'], output_modalities: ['image'] },
            supported_parameters: Object.fromEntries((m.supported_parameters ?? []).map((k) => [k, { type: 'string' }])),
            supports_streaming: true,
            endpoints: `/api/v1/images/models/${m.id}/endpoints`,
          })),
        });
      }
      if (p === '/generation') return generationLookup(r, res, params);
      if (p === '/key') return keyInfo(r, res);
      if (p === '/credits') return sendJson(r, res, 200, { data: { total_credits: opts.totalCredits ?? 100, total_usage: roundCost((opts.usageBase ?? 0) + spent) } });
      return sendError(r, res, openRouterError(404));
    }
    if (r.method !== 'POST') return sendError(r, res, openRouterError(404));

    const type = String(r.headers['content-type'] ?? '');
    if (p === '/audio/transcriptions' && type.startsWith('multipart/form-data')) return transcription(r, res, undefined);
    let body: Record<string, unknown>;
    try {
      const v: unknown = JSON.parse(r.body.toString('utf8'));
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      body = v as Record<string, unknown>;
    } catch {
      return sendError(r, res, openRouterError(400, 'Invalid JSON body'));
    }
    if (p === '/chat/completions') return completion(r, res, body, true);
    if (p === '/completions') return completion(r, res, body, false);
    if (p === '/embeddings') return embeddings(r, res, body);
    if (p === '/audio/speech') return speech(r, res, body);
    if (p === '/audio/transcriptions') return transcription(r, res, body);
    if (p === '/images') return images(r, res, body);
    return sendError(r, res, openRouterError(404));
  };

  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    let settle!: () => void;
    const r: Received = {
      seq: ++seq,
      method: req.method ?? '',
      url,
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.alloc(0),
      sha256: EMPTY_SHA256,
      aborted: false,
      response: new Sent(),
      done: new Promise<void>((resolve) => (settle = resolve)),
    };
    if (recording) fake.received.push(r);
    res.on('close', () => {
      r.response.complete = res.writableFinished;
      if (!res.writableFinished) r.aborted = true;
      settle();
      events.emit('change');
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    req.on('end', () => {
      r.body = Buffer.concat(chunks);
      if (recording) r.sha256 = sha256(r.body);
      events.emit('change');
      route(r, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(r, res, openRouterError(500, String(err)));
        else res.destroy();
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  fake.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.url = `${fake.origin}/api/v1`;
  return fake;
}
