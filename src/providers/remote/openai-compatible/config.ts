// Upstream configuration: environment variables (and an optional JSON file with the
// same keys in camelCase) parsed into one typed, validated object at start-up.
// A bad value throws an Error naming the variable, so start-up can print it and exit.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DECISION_MODELS, SPEECH_MODELS, TRANSCRIPTION_MODELS, type ChatModel } from '../../../contract/models.ts';
import type { Price } from '../../../credits/pricing.ts';

export interface UpstreamConfig {
  /** e.g. http://127.0.0.1:8000/v1, no trailing slash */
  baseUrl: string;
  /** Non-enumerable: JSON.stringify, util.inspect and loggers do not see it. */
  readonly apiKey?: string;
  /** Upstream model name behind each of our model ids. */
  models: Record<ChatModel, string>;
  prices: Record<ChatModel, Price>;
  /** Non-enumerable, like apiKey: extra headers often carry credentials too. */
  readonly headers: Record<string, string>;
  /** Whole call, retries and streaming included. */
  timeoutMs: number;
  /** From sending the request to the first byte of the response body. */
  connectTimeoutMs: number;
  maxRetries: number;
  /** Send a message's cache breakpoint as `cache_control` on its last text part (OpenRouter takes it; strict servers refuse unknown part fields). */
  cacheControl: boolean;
  /** Upstream model names that accept `reasoning_effort` (and `max_completion_tokens`). */
  reasoningModels: string[];
  /** `upstream`: /v1/embeddings goes to the upstream's /embeddings; `offline`: the built-in embedder answers it. */
  embeddings: 'upstream' | 'offline';
  /** `upstream`: /v1/moderations (and the Moderate requests switch) go to the upstream's /moderations; `offline` (default): the built-in engine. */
  moderation: 'upstream' | 'offline';
  /** `upstream`: /v1/decisions runs on the upstream's chat models (decisionModels); `offline` (default): the built-in engine. */
  decisions: 'upstream' | 'offline';
  /** Upstream chat model name behind each decision model id (an id not named runs under its own name). */
  decisionModels: Record<string, string>;
  /** `upstream`: /v1/audio/speech goes to the upstream's /audio/speech (speechModels); `offline` (default): the built-in engine. */
  speech: 'upstream' | 'offline';
  /** Upstream model name behind each speech model id (agent-voice runs tts-1, the others their own names, unless named here). */
  speechModels: Record<string, string>;
  /** `upstream`: /v1/audio/transcriptions and /translations go to the upstream's /audio/*; `offline` (default): the built-in engine. */
  transcription: 'upstream' | 'offline';
  /** Upstream model name behind each transcription model id (agent-transcribe: whisper-1; an id not named runs under its own name). */
  transcriptionModels: Record<string, string>;
  /** USD per minute of audio by transcription model id on the upstream (an id not named pays TRANSCRIPTION_PRICE_PER_MINUTE). */
  transcriptionPrices: Record<string, number>;
  /** `upstream`: /v1/images/* go to the upstream's /images/*; `offline` (default): the offline image engine answers them. */
  images: 'upstream' | 'offline';
  /** The upstream model name that makes images (`model` of the request is without effect). */
  imageModel: string;
}

// One row per setting: the environment name and the config-file key.
const KEYS = {
  baseUrl: 'UPSTREAM_BASE_URL',
  apiKey: 'UPSTREAM_API_KEY',
  modelAgent: 'UPSTREAM_MODEL_AGENT',
  modelAgentThink: 'UPSTREAM_MODEL_AGENT_THINK',
  priceInputPerMtok: 'UPSTREAM_PRICE_INPUT_PER_MTOK',
  priceOutputPerMtok: 'UPSTREAM_PRICE_OUTPUT_PER_MTOK',
  priceInputPerMtokThink: 'UPSTREAM_PRICE_INPUT_PER_MTOK_THINK',
  priceOutputPerMtokThink: 'UPSTREAM_PRICE_OUTPUT_PER_MTOK_THINK',
  headers: 'UPSTREAM_HEADERS',
  timeoutMs: 'UPSTREAM_TIMEOUT_MS',
  connectTimeoutMs: 'UPSTREAM_CONNECT_TIMEOUT_MS',
  maxRetries: 'UPSTREAM_MAX_RETRIES',
  cacheControl: 'UPSTREAM_CACHE_CONTROL',
  reasoningModels: 'UPSTREAM_REASONING_MODELS',
  embeddings: 'UPSTREAM_EMBEDDINGS',
  moderation: 'UPSTREAM_MODERATION',
  decisions: 'UPSTREAM_DECISIONS',
  decisionModels: 'UPSTREAM_DECISION_MODELS',
  speech: 'UPSTREAM_SPEECH',
  speechModels: 'UPSTREAM_SPEECH_MODELS',
  transcription: 'UPSTREAM_TRANSCRIPTION',
  transcriptionModels: 'UPSTREAM_TRANSCRIPTION_MODELS',
  transcriptionPrices: 'UPSTREAM_TRANSCRIPTION_PRICES',
  images: 'UPSTREAM_IMAGES',
  imageModel: 'UPSTREAM_IMAGE_MODEL',
} as const;
type Key = keyof typeof KEYS;

// --- field schemas (each accepts an env string or a config-file JSON value) ---

const numeric = (inner: z.ZodNumber) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v.trim()) : v), inner);

const price = numeric(
  z.number({ error: 'must be a number' }).finite('must be a finite number').min(0, 'must not be negative'),
);
const positiveInt = numeric(
  z.number({ error: 'must be a number' }).int('must be an integer').positive('must be greater than 0'),
);
const retries = numeric(
  z.number({ error: 'must be a number' }).int('must be an integer').min(0, 'must not be negative').max(10, 'must be at most 10'),
);
const name = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty');

const baseUrl = z
  .string({ error: 'must be a string' })
  .trim()
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, { error: 'must be an http:// or https:// URL', abort: true })
  // Credentials in the URL would leak into logs and error messages: use the key or headers.
  .refine((s) => {
    const u = new URL(s);
    return u.username === '' && u.password === '';
  }, 'must not contain credentials (use UPSTREAM_API_KEY or UPSTREAM_HEADERS)')
  .transform((s) => s.replace(/\/+$/, ''));

/** A JSON text as its value (an env string); invalid JSON fails the object check that follows, with its message. */
const fromJson = (v: unknown) => {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return Symbol('invalid JSON');
  }
};

// RFC 9110 token: HTTP clients reject anything else, better to fail at start-up.
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const headers = z
  .preprocess(
    fromJson,
    z.record(z.string(), z.string({ error: 'header values must be strings' }), {
      error: 'must be a JSON object of header names to string values',
    }),
  )
  .refine((h) => Object.keys(h).every((k) => headerName.test(k)), 'contains an invalid header name')
  .refine((h) => Object.values(h).every((v) => !/[\r\n\0]/.test(v)), 'contains an invalid header value');

const modelList = z
  .union([z.string(), z.array(z.string())], { error: 'must be a comma-separated list of model names' })
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s !== ''));

const FIELDS = {
  baseUrl,
  apiKey: name,
  modelAgent: name,
  modelAgentThink: name,
  priceInputPerMtok: price,
  priceOutputPerMtok: price,
  priceInputPerMtokThink: price,
  priceOutputPerMtokThink: price,
  headers,
  timeoutMs: positiveInt,
  connectTimeoutMs: positiveInt,
  maxRetries: retries,
  cacheControl: z.enum(['true', 'false'], { error: 'must be true or false' }).transform((v) => v === 'true'),
  reasoningModels: modelList,
  embeddings: z.enum(['upstream', 'offline'], { error: 'must be upstream or offline' }),
  moderation: z.enum(['upstream', 'offline'], { error: 'must be upstream or offline' }),
  decisions: z.enum(['upstream', 'offline'], { error: 'must be upstream or offline' }),
  decisionModels: z
    .preprocess(
      fromJson,
      z.record(z.string(), name, { error: 'must be a JSON object of decision model ids to upstream model names' }),
    )
    .refine((m) => Object.keys(m).every((k) => (DECISION_MODELS as readonly string[]).includes(k)), `keys must be decision model ids (${DECISION_MODELS.join(', ')})`),
  speech: z.enum(['upstream', 'offline'], { error: 'must be upstream or offline' }),
  speechModels: z
    .preprocess(fromJson, z.record(z.string(), name, { error: 'must be a JSON object of speech model ids to upstream model names' }))
    .refine((m) => Object.keys(m).every((k) => (SPEECH_MODELS as readonly string[]).includes(k)), `keys must be speech model ids (${SPEECH_MODELS.join(', ')})`),
  transcription: z.enum(['upstream', 'offline'], { error: 'must be upstream or offline' }),
  transcriptionModels: z
    .preprocess(fromJson, z.record(z.string(), name, { error: 'must be a JSON object of transcription model ids to upstream model names' }))
    .refine((m) => Object.keys(m).every((k) => (TRANSCRIPTION_MODELS as readonly string[]).includes(k)), `keys must be transcription model ids (${TRANSCRIPTION_MODELS.join(', ')})`),
  transcriptionPrices: z
    .preprocess(fromJson, z.record(z.string(), price, { error: 'must be a JSON object of transcription model ids to USD per minute' }))
    .refine((m) => Object.keys(m).every((k) => (TRANSCRIPTION_MODELS as readonly string[]).includes(k)), `keys must be transcription model ids (${TRANSCRIPTION_MODELS.join(', ')})`),
  images: z.enum(['upstream', 'offline'], { error: 'must be upstream or offline' }),
  imageModel: name,
} satisfies Record<Key, z.ZodType>;

type Parsed = { [K in Key]?: z.output<(typeof FIELDS)[K]> };

// --- loading ---------------------------------------------------------------

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`UPSTREAM_CONFIG_FILE: cannot read ${path}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`UPSTREAM_CONFIG_FILE: ${path} is not valid JSON`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Error(`UPSTREAM_CONFIG_FILE: ${path} must contain a JSON object`);
  }
  // A misspelt key would otherwise be silently ignored.
  for (const key of Object.keys(data)) {
    if (!(key in KEYS)) throw new Error(`UPSTREAM_CONFIG_FILE: unknown key "${key}" in ${path}`);
  }
  return data as Record<string, unknown>;
}

function pickRaw(env: NodeJS.ProcessEnv, file: Record<string, unknown>, key: Key): { value: unknown; from: string } | undefined {
  const envValue = env[KEYS[key]];
  // An empty variable counts as unset (docker-compose `FOO=`), except the
  // reasoning-model list, where empty explicitly means "no reasoning models".
  if (envValue !== undefined && (envValue.trim() !== '' || key === 'reasoningModels')) {
    return { value: envValue, from: KEYS[key] };
  }
  if (file[key] !== undefined && file[key] !== null) {
    return { value: file[key], from: `${KEYS[key]} (${key} in UPSTREAM_CONFIG_FILE)` };
  }
  return undefined;
}

function parseAll(env: NodeJS.ProcessEnv, file: Record<string, unknown>): Parsed {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(KEYS) as Key[]) {
    const raw = pickRaw(env, file, key);
    if (!raw) continue;
    const result = FIELDS[key].safeParse(raw.value);
    if (!result.success) {
      // Values are never echoed: some of them (key, headers, URL userinfo) are secrets.
      throw new Error(`${raw.from}: ${result.error.issues[0]?.message ?? 'invalid value'}`);
    }
    out[key] = result.data;
  }
  return out as Parsed;
}

/**
 * Reads the upstream configuration. Returns undefined when no base URL is set
 * (the offline engine is used then); throws an Error naming the variable when a
 * value is invalid, or when a key is set without a base URL.
 */
export function loadUpstreamConfig(env: NodeJS.ProcessEnv): UpstreamConfig | undefined {
  const filePath = env.UPSTREAM_CONFIG_FILE?.trim();
  const file = filePath ? readConfigFile(filePath) : {};
  const p = parseAll(env, file);
  if (p.baseUrl === undefined) {
    // A key alone most likely means a base URL was forgotten: saying so beats running offline unnoticed.
    if (p.apiKey !== undefined) {
      throw new Error(`${pickRaw(env, file, 'apiKey')!.from}: set without UPSTREAM_BASE_URL (set UPSTREAM_BASE_URL to use the upstream, or unset UPSTREAM_API_KEY)`);
    }
    return undefined;
  }
  if (p.modelAgent === undefined) {
    throw new Error('UPSTREAM_MODEL_AGENT: required when UPSTREAM_BASE_URL is set (the upstream model name behind "agent")');
  }

  const agentModel = p.modelAgent;
  const thinkModel = p.modelAgentThink ?? agentModel;
  const agentPrice: Price = { inputPerMTok: p.priceInputPerMtok ?? 0, outputPerMTok: p.priceOutputPerMtok ?? 0 };
  const config = {
    baseUrl: p.baseUrl,
    models: { agent: agentModel, 'agent-think': thinkModel },
    prices: {
      agent: agentPrice,
      'agent-think': {
        inputPerMTok: p.priceInputPerMtokThink ?? agentPrice.inputPerMTok,
        outputPerMTok: p.priceOutputPerMtokThink ?? agentPrice.outputPerMTok,
      },
    },
    timeoutMs: p.timeoutMs ?? 120_000,
    connectTimeoutMs: p.connectTimeoutMs ?? 30_000,
    maxRetries: p.maxRetries ?? 2,
    cacheControl: p.cacheControl ?? false,
    // Empty unless configured: a server that is not a reasoning model rejects or misreads
    // max_completion_tokens and reasoning_effort.
    reasoningModels: p.reasoningModels ?? [],
    embeddings: p.embeddings ?? 'upstream',
    // Not every OpenAI-compatible server has /moderations or logprobs: an operator turns them on.
    moderation: p.moderation ?? 'offline',
    decisions: p.decisions ?? 'offline',
    decisionModels: p.decisionModels ?? {},
    speech: p.speech ?? 'offline',
    speechModels: p.speechModels ?? {},
    transcription: p.transcription ?? 'offline',
    transcriptionModels: p.transcriptionModels ?? {},
    transcriptionPrices: p.transcriptionPrices ?? {},
    images: p.images ?? 'offline',
    imageModel: p.imageModel ?? 'gpt-image-1',
  } as UpstreamConfig;
  Object.defineProperty(config, 'apiKey', { value: p.apiKey, enumerable: false });
  Object.defineProperty(config, 'headers', { value: p.headers ?? {}, enumerable: false });
  return config;
}

/** The price table entry for one of our model ids. */
export function priceFor(config: UpstreamConfig, model: ChatModel): Price {
  return config.prices[model];
}
