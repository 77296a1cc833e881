// The one model-facing interface. Handlers build a ChatRequest, a provider yields
// stream parts; each surface's encoder turns them into its wire format.
import type { ChatModel } from '../contract/models.ts';

// --- Request -------------------------------------------------------------

export type ContentPart =
  | { type: 'text'; text: string }
  /** https URL or data URL */
  | { type: 'image_url'; url: string; detail?: 'auto' | 'low' | 'high' }
  /**
   * A file: its bytes as a data URL (a stored file's are read by the handler), or only its
   * id; `text` is its content when it is text, for engines that read no files.
   */
  | { type: 'file'; file_id?: string; filename?: string; data_url?: string; text?: string }
  | { type: 'input_audio'; data: string; format: string };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, as the model produced it */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ContentPart[]; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; reasoning?: string; name?: string }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface FunctionTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface ChatRequest {
  /** Our model id; providers map it to their own model name. */
  model: ChatModel;
  /**
   * false: the caller wants the answer whole, so a provider may fetch it in one piece
   * (an upstream is then asked for JSON, not a stream); the events are the same.
   * Default true.
   */
  stream?: boolean;
  messages: ChatMessage[];
  tools?: FunctionTool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  /** Output cap in tokens (already reduced to the key's cap). */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  topA?: number;
  repetitionPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  logitBias?: Record<string, number>;
  seed?: number;
  stop?: string[];
  logprobs?: boolean;
  topLogprobs?: number;
  reasoningEffort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  verbosity?: 'low' | 'medium' | 'high';
  user?: string;
  /** The service's request id, for the provider's logs and metrics only (never sent upstream). */
  requestId?: string;
}

/** Text completion: one prompt, plain text out. */
export interface CompletionRequest
  extends Omit<ChatRequest, 'messages' | 'tools' | 'toolChoice' | 'parallelToolCalls' | 'logprobs' | 'topLogprobs'> {
  prompt: string;
}

// --- Events --------------------------------------------------------------

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

/**
 * What a provider streams: tagged parts with ids, as the Vercel AI SDK's stream parts
 * are. Text, reasoning and each tool call's input open with `*-start`, carry deltas and
 * close with `*-end` (parts of one id are contiguous for text and reasoning; tool calls
 * may interleave by id). A service-run tool's input says `providerExecuted` and is
 * followed by its `tool-result`. Every stream ends with exactly one `finish` (reason,
 * usage, the provider's own cost when it reports one) or one `error`: providers report
 * failures as parts, never by throwing.
 */
export type StreamPart =
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string; logprobs?: TokenLogprob[] }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  /** `id` is the call id the tool's result answers. */
  | { type: 'tool-input-start'; id: string; toolName: string; providerExecuted?: boolean }
  | { type: 'tool-input-delta'; id: string; delta: string }
  | { type: 'tool-input-end'; id: string }
  /**
   * The result of a tool the service ran (providerExecuted), as the model read it;
   * `data`: what the surface shows of it beyond the text (a file search's results).
   */
  | { type: 'tool-result'; toolCallId: string; toolName: string; result: string; data?: unknown }
  | { type: 'source'; id: string; url: string; title?: string }
  | { type: 'warning'; message: string }
  /**
   * `usage` as the provider reported it (absent when it gave none: the run then charges
   * its own count); `costUsd`: the provider's own reported cost (OpenRouter's usage.cost).
   */
  | { type: 'finish'; reason: FinishReason; usage?: Usage; costUsd?: number }
  | { type: 'error'; error: ProviderError };

export interface ChatProvider {
  readonly name: string;
  /** Streams the answer. Must stop promptly, and stop any upstream call, when `signal` aborts. */
  chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<StreamPart>;
  /** Text completion (legacy endpoint). */
  complete(request: CompletionRequest, signal: AbortSignal): AsyncIterable<StreamPart>;
  /** Releases what the provider holds (an upstream connection pool); called at shutdown. */
  close?(): Promise<void>;
}

/**
 * What an upstream said of its failure, in forms fit to pass on: never its body, only
 * short identifiers and a bounded, cleaned, scrubbed message (`outsideText`, src/secrets.ts).
 */
export interface UpstreamErrorDetail {
  /** Its error type, when a short identifier (`invalid_request_error`, `BadRequestError`). */
  type?: string;
  /** Its error code, when a short identifier (`context_length_exceeded`). */
  code?: string;
  /** Its message: at most 200 characters, no control characters, configured secrets scrubbed. */
  message?: string;
}

/**
 * A provider failure the HTTP layer maps to 502 upstream_error. `message` is in our words
 * and is shown to the client: a provider puts nothing in it (nor in `upstream`) that
 * came from outside unless cleaned and scrubbed.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
    readonly upstream?: UpstreamErrorDetail,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

// --- Embeddings -------------------------------------------------------------

export interface EmbeddingRequest {
  /** The model that runs, an alias already resolved (e.g. text-embedding-3-small). */
  model: string;
  /** The texts, in order (token arrays are decoded by the caller). */
  input: readonly string[];
  /** Vectors shortened to this size (text-embedding-3 models only); absent: the model's own size. */
  dimensions?: number;
  user?: string;
  /** The service's request id, for the provider's logs and metrics only (never sent upstream). */
  requestId?: string;
}

export interface EmbeddingResult {
  /** One vector per input, in input order. */
  vectors: Float32Array[];
  /** Input tokens as the provider counted them; absent when it reported none. */
  inputTokens?: number;
}

/**
 * Turns texts into vectors. Unlike a chat stream there is nothing to deliver before the
 * end, so it is one promise: it rejects with a ProviderError when the provider fails,
 * and with `signal.reason` when the signal aborts.
 */
export interface EmbeddingProvider {
  readonly name: string;
  /**
   * Results carry `inputTokens` counted by the provider's own tokenizer, which may count
   * more than the service's (so a reservation must bound them by the inputs' bytes).
   */
  readonly reportsUsage: boolean;
  embed(request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult>;
}

/** One input a moderation scores: a text, or text and images (the image parts' URLs). */
export interface ModerationInput {
  texts: string[];
  images: string[];
  /**
   * The images as the engine's `prepareImage` made them, in the order of `images`: set
   * by the caller, before the request's Run opens, when the engine has `prepareImage`.
   */
  prepared?: PreparedImage[];
}

/** An image read and decoded for an engine that classifies pixels: RGB, 3 bytes a pixel, row by row. */
export interface PreparedImage {
  width: number;
  height: number;
  pixels: Uint8Array;
}

/** The bytes of an image part, before `prepareImage`: a data URL's base64 text (still encoded) or a fetched body. */
export type ImageBytes = { base64: Uint8Array } | { bytes: Uint8Array };

/** An image the engine cannot read (not an image, a format it does not take, too large): the caller names the part; the message is a reason, in lower case, to follow a colon. */
export class ImageUnreadable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageUnreadable';
  }
}

/** One input's scores, per category of the reference's 13 (moderation ids: contract/endpoints/moderations.ts). */
export interface ModerationScores {
  scores: Record<string, number>;
  /** The input types each category was scored on (`text`, `image`). */
  appliedTo: Record<string, ('text' | 'image')[]>;
  /** Why, where the engine can say (the offline engine's rules that fired). */
  fired?: { rule: string; category: string; weight: number; negated: boolean }[];
}

export interface ModerationProvider {
  readonly name: string;
  /** `model` as the service names it (text-moderation-* models score text only). */
  moderate(request: { model: string; inputs: ModerationInput[]; requestId?: string }, signal: AbortSignal): Promise<ModerationScores[]>;
  /**
   * An engine that classifies pixels reads each image here, before the request's Run
   * opens, so an unreadable one is refused (ImageUnreadable) with nothing held or
   * charged; what it returns comes back to `moderate` as the input's `prepared`.
   * Absent: the engine takes images as their URLs.
   */
  prepareImage?(image: ImageBytes, signal: AbortSignal): Promise<PreparedImage>;
}

// --- Images (POST /v1/images/*; the image_generation tool) ---

export type ImageQuality = 'standard' | 'hd' | 'high' | 'max';
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** An image request as the contract checked it (contract/endpoints/images.ts). */
export interface ImageRequest {
  operation: 'generation' | 'edit' | 'variation';
  /** The prompt (generations and edits). */
  prompt?: string;
  /** The pixel size asked for, or `auto` (generations: 1024 x 1024; edits and variations: the input's, within the limits). */
  size: { width: number; height: number } | 'auto';
  quality: ImageQuality;
  /** The uploaded image (edits and variations), its format judged from its bytes. */
  image?: { bytes: Buffer; filename: string; format: ImageFormat; width: number; height: number };
  /**
   * The request's fields as the client sent them, but `model` and `response_format`
   * (without effect here): what an upstream receives, with its own model.
   */
  fields: Record<string, string | number | boolean>;
  requestId?: string;
}

export interface ImageResult {
  /** base64 of the image's bytes, or the upstream's link to it. */
  image: { b64: string } | { url: string };
  /** The format of `b64` (absent when unknown, e.g. a link). */
  format?: 'png' | 'jpeg' | 'webp';
  width?: number;
  height?: number;
  revisedPrompt?: string;
  /** Tokens as the engine counts them (the reference's ImageGenUsage). */
  usage?: { inputTokens: number; outputTokens: number; textTokens: number; imageTokens: number };
}

/** Makes one image; rejects with a ProviderError when it fails and with `signal.reason` when the signal aborts. */
export interface ImageProvider {
  readonly name: string;
  create(request: ImageRequest, signal: AbortSignal): Promise<ImageResult>;
}
