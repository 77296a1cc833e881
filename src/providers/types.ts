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

/** The conversation up to and including a message is a prompt-cache prefix (the messages surface's cache_control). */
export interface CacheBreakpoint {
  cacheBreakpoint?: { ttl?: '5m' | '1h' };
}

export type ChatMessage = (
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ContentPart[]; name?: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; reasoning?: string; name?: string }
  | { role: 'tool'; content: string; tool_call_id: string }
) &
  CacheBreakpoint;

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
  | {
      type: 'finish';
      reason: FinishReason;
      usage?: Usage;
      costUsd?: number;
      /** The stop sequence that ended the text, where the provider tells. */
      stopSequence?: string;
      /** The agent loop stopped at its limit with service calls still wanted, not run (AgentTurn.pauseAtLimit): the turn can be continued. */
      paused?: boolean;
    }
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

/** A decision question as the contract checked it (contract/endpoints/decisions.ts). */
export type DecisionQuestion =
  | { name: string; instructions: string; type: 'predicate' }
  | { name: string; instructions: string; type: 'choice'; choices: { value: string; description: string }[] }
  | { name: string; instructions: string; type: 'score'; levels: { label: string; description: string }[] };

/** One part of a decision's input: text, or an image as a base64 data URL. */
export type DecisionPart = { type: 'text'; text: string } | { type: 'image'; url: string };

/**
 * One question's answer: a probability per option (predicate: [true, false]; choice:
 * each choice; score: each level, lowest first), or the engine's refusal.
 */
export type DecisionAnswer = { probabilities: number[] } | { refusal: string };

export interface DecisionRequest {
  /** Our model id (gpt-6-luna for an input with images). */
  model: string;
  /** The input's user messages, each a list of parts. */
  messages: DecisionPart[][];
  questions: DecisionQuestion[];
  requestId?: string;
}

export interface DecisionProvider {
  readonly name: string;
  /** Whether image parts can be read (the offline engine cannot: a request with one is refused before it runs). */
  readonly readsImages: boolean;
  /** Whether the input is read (and billed) once per question (a model call each) rather than once for all. */
  readonly inputPerQuestion: boolean;
  /** One answer per question, in order; the tokens read and written where the engine counts them. */
  decide(request: DecisionRequest, signal: AbortSignal): Promise<{ answers: DecisionAnswer[]; inputTokens?: number; outputTokens?: number }>;
}

// --- Speech (POST /v1/audio/speech) ---------------------------------------------

export type SpeechFormat = 'mp3' | 'wav' | 'pcm';

export interface SpeechRequest {
  /** Our model id. */
  model: string;
  input: string;
  /** The voice the request named; absent when it named none (the engine's default, eve offline). */
  voice?: string;
  format: SpeechFormat;
  /** 0.25 to 4. */
  speed: number;
  /** The request's fields as the contract passed them, which an upstream is sent as they are (its model mapped). */
  fields: Record<string, unknown>;
  /** The service's request id, for the provider's logs and metrics only (never sent upstream). */
  requestId?: string;
}

export interface SpeechAudio {
  /**
   * The audio in pieces, as each is made; it ends when the audio is whole. A failure
   * throws (the signal's reason when the caller went away). Stopping early stops the engine.
   */
  chunks: AsyncIterable<Uint8Array>;
  /** Characters of the input this answer is charged for so far: all once whole, those read aloud when cut short. */
  charged(): number;
}

export interface SpeechProvider {
  readonly name: string;
  /** Why this engine cannot run here, naming what to install; absent when it can. */
  readonly missing?: string;
  /**
   * Starts reading the input aloud: resolves once the first audio is there, so a failure
   * before it (a ProviderError, an ApiError such as a busy engine's 503) is answered
   * before any byte is sent.
   */
  speak(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio>;
  /** Releases what the engine holds (its workers, an upstream pool); called at shutdown. */
  close?(): Promise<void>;
}

// --- Transcription (speech to text) -------------------------------------------

/** The upload decoded to 16 kHz mono 16-bit PCM (ffmpeg), in the call's private temp directory. */
export interface DecodedAudio {
  /** The upload as sent (a private copy). */
  inputPath: string;
  /** Raw s16le, 16 kHz, mono. */
  pcmPath: string;
  /** Its duration, measured from the decoded samples. */
  seconds: number;
}

/** One transcription or translation as the contract checked it. */
export interface TranscriptionRequest {
  task: 'transcribe' | 'translate';
  /** Our model id. */
  model: string;
  /** The upload's name and type as sent (forwarded upstream; never trusted). */
  filename: string;
  contentType: string;
  /** ISO-639-1, lower case (transcriptions only). */
  language?: string;
  prompt?: string;
  temperature?: number;
  responseFormat: 'json' | 'text' | 'srt' | 'verbose_json' | 'vtt';
  /** As sent (absent: not sent). */
  timestampGranularities?: ('word' | 'segment')[];
  requestId?: string;
}

export interface RecognizedWord {
  word: string;
  start: number;
  end: number;
  /** The recognizer's posterior, 0 to 1. */
  confidence: number;
}

/** A stretch of speech between pauses. */
export interface RecognizedSegment {
  start: number;
  end: number;
  words: RecognizedWord[];
}

/**
 * What an engine heard: segments of words with times (the offline engine: the service
 * formats every response_format itself), or the upstream's answer as it came, in the
 * format the client asked for (JSON parsed, text formats as text).
 */
export type TranscriptionResult =
  | { kind: 'segments'; language: string; segments: RecognizedSegment[] }
  | { kind: 'json'; body: Record<string, unknown> }
  | { kind: 'text'; text: string };

export interface TranscriptionProvider {
  readonly name: string;
  /** Whether it can run here; when not, why and what to install (the start-up line and each request's 503). */
  status(): { available: true; describe: string } | { available: false; reason: string };
  /** Languages it recognizes (ISO-639-1); undefined: any. */
  readonly languages?: readonly string[];
  /**
   * Decodes the upload (ffmpeg, judging the format by content) into `dir`: a 400 naming
   * `file` when it is not audio ffmpeg can read.
   */
  decode(inputPath: string, dir: string, signal: AbortSignal): Promise<DecodedAudio>;
  transcribe(request: TranscriptionRequest, audio: DecodedAudio, signal: AbortSignal): Promise<TranscriptionResult>;
  close?(): Promise<void>;
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
