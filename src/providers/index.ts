// Chooses the model providers by configuration: an OpenAI-compatible upstream when
// UPSTREAM_BASE_URL is set, else the built-in offline engine (and the built-in
// embedder, which UPSTREAM_EMBEDDINGS=offline also keeps; moderation and decisions stay
// offline unless UPSTREAM_MODERATION / UPSTREAM_DECISIONS say upstream). Prices come with it.
import { configuredSecrets, type Config } from '../config.ts';
import type { ChatModel } from '../contract/models.ts';
import { createLexicalEmbeddings } from './inline/lexical-embeddings.ts';
import { createOfflineDecisions } from './inline/decision/offline-decisions.ts';
import { createOfflineModeration } from './inline/moderation/offline-moderation.ts';
import { createOfflineEngine } from './inline/offline/index.ts';
import type { Price } from '../credits/pricing.ts';
import { createOpenAICompatibleProvider, loadUpstreamConfig } from './remote/openai-compatible/index.ts';
import { CHAT_MODELS, DECISION_MODELS, EMBEDDING_MODELS, MODERATION_MODELS, SPEECH_MODELS } from '../contract/models.ts';
import { embeddingPrice, Engines, IMAGE_ENGINE } from './engines.ts';
import { createOfflineImages } from './inline/images/offline-images.ts';
import type { ChatProvider, DecisionProvider, EmbeddingProvider, ImageProvider, ModerationProvider, SpeechProvider } from './types.ts';
import { createOfflineSpeech } from './inline/speech/offline-speech.ts';
import { upstreamSpeechModel } from './remote/openai-compatible/speech.ts';
import { transcriptionPrice } from './engines.ts';
import { TRANSCRIPTION_MODELS } from '../contract/models.ts';
import { createOfflineTranscription, createTranscriptionTools } from './inline/transcription/offline-transcription.ts';
import { DEFAULT_TRANSCRIPTION_MODELS } from './remote/openai-compatible/transcriptions.ts';
import type { TranscriptionProvider } from './types.ts';
import type { UpstreamObserver } from './upstream-observer.ts';

export interface ChatBackend {
  provider: ChatProvider;
  /** USD per million tokens, by our model id */
  price(model: ChatModel): Price;
  /** `offline` or the upstream base URL's host, for logs */
  describe: string;
  /** Set when an upstream is configured: its host, and a check that it answers (/readyz). */
  upstream?: { host: string; probe(timeoutMs: number): Promise<void> };
  /** /v1/embeddings: the upstream's /embeddings, or the built-in lexical embedder (absent: the built-in one). */
  embeddings?: EmbeddingProvider;
  /** /v1/images/*: the upstream's /images/* (UPSTREAM_IMAGES=upstream; absent: the offline image engine). */
  images?: ImageProvider;
  /** Chat models served by another engine than `provider` (an upstream's model named `offline` runs on the offline engine). */
  perModel?: Partial<Record<ChatModel, { provider: ChatProvider; price: Price }>>;
  /** /v1/moderations and the Moderate requests switch: the upstream's /moderations (absent: the offline engine). */
  moderation?: ModerationProvider;
  /** /v1/decisions: the upstream's chat models (absent: the offline engine). */
  decisions?: DecisionProvider;
  /** /v1/audio/speech: the upstream's /audio/speech (absent: the offline engine). */
  speech?: SpeechProvider;
  /** /v1/audio/transcriptions and /translations: the upstream's /audio/* (absent: the offline engine), with its prices per minute by model id. */
  transcription?: { provider: TranscriptionProvider; pricesPerMinute: Record<string, number> };
}

/** Speech models at the HD price (SPEECH_PRICE_PER_MCHAR_HD). */
const HD_SPEECH_MODELS = new Set(['tts-1-hd', 'gpt-4o-tts']);

/** The upstream model name that keeps one of our models on the offline engine. */
export const OFFLINE = 'offline';

export function createChatBackend(config: Config, env: NodeJS.ProcessEnv = process.env, observer?: UpstreamObserver): ChatBackend {
  const upstream = loadUpstreamConfig(env);
  if (upstream) {
    // The service's own secrets too: an upstream that echoes text it was given must not pass any of them on.
    const provider = createOpenAICompatibleProvider(upstream, { secrets: configuredSecrets(config), ...(observer ? { observer } : {}) });
    const host = new URL(upstream.baseUrl).host;
    const embeddings: EmbeddingProvider = upstream.embeddings === 'upstream' ? { name: 'openai-compatible', reportsUsage: true, embed: (r, s) => provider.embed(r, s) } : createLexicalEmbeddings();
    // A model whose upstream name is `offline` stays on the offline engine (one upstream model, one offline).
    const offline = CHAT_MODELS.filter((m) => upstream.models[m] === OFFLINE);
    const engine = offline.length > 0 ? createOfflineEngine() : undefined;
    const perModel = Object.fromEntries(offline.map((m) => [m, { provider: engine!, price: config.offlinePrices[m] }]));
    const describe = offline.length > 0 ? `${host} (${offline.join(', ')} offline)` : host;
    const moderation: ModerationProvider | undefined = upstream.moderation === 'upstream' ? { name: 'openai-compatible', moderate: (r, s) => provider.moderate(r, s) } : undefined;
    const decisions: DecisionProvider | undefined =
      upstream.decisions === 'upstream'
        ? { name: 'openai-compatible', readsImages: true, inputPerQuestion: true, decide: (r, s) => provider.decide(upstream.decisionModels[r.model] ?? r.model, r, s) }
        : undefined;
    const speech: SpeechProvider | undefined =
      upstream.speech === 'upstream' ? { name: 'openai-compatible', speak: (r, s) => provider.speak(upstreamSpeechModel(upstream.speechModels, r.model), r, s) } : undefined;
    // Transcriptions: the upstream's /audio/* when UPSTREAM_TRANSCRIPTION=upstream; the upload is decoded here all the same (its duration bounds and sets the charge).
    let transcription: ChatBackend['transcription'];
    if (upstream.transcription === 'upstream') {
      const tools = createTranscriptionTools(config.transcription);
      const models = { ...DEFAULT_TRANSCRIPTION_MODELS, ...upstream.transcriptionModels };
      transcription = {
        pricesPerMinute: upstream.transcriptionPrices,
        provider: {
          name: 'openai-compatible',
          status: () => (tools.decoder.missing ? { available: false, reason: tools.decoder.missing } : { available: true, describe: `upstream ${host}` }),
          decode: (inputPath, dir, signal) => tools.decoder.decode(inputPath, dir, signal),
          transcribe: (request, audio, signal) => provider.transcribe(models[request.model] ?? request.model, request, audio, signal),
        },
      };
    }
    const images: ImageProvider | undefined = upstream.images === 'upstream' ? { name: 'openai-compatible', create: (r, s) => provider.image(r, s) } : undefined;
    return {
      ...(transcription ? { transcription } : {}),
      ...(images ? { images } : {}),
      provider,
      price: (m) => upstream.prices[m],
      describe,
      upstream: { host, probe: (ms) => provider.probe(ms) },
      embeddings,
      perModel,
      ...(moderation ? { moderation } : {}),
      ...(decisions ? { decisions } : {}),
      ...(speech ? { speech } : {}),
    };
  }
  return { provider: createOfflineEngine(), price: (m) => config.offlinePrices[m], describe: 'offline', embeddings: createLexicalEmbeddings() };
}

/**
 * The engines by capability the backend's configuration chose: its chat provider for
 * every chat model but those with their own engine, its embedder (else the built-in
 * one) for every embedding model, each at its configured price.
 */
export function enginesFor(config: Config, backend: ChatBackend): Engines {
  const engines = new Engines()
    .register('chat', CHAT_MODELS, backend.provider, (m) => backend.price(m as ChatModel))
    .register('embeddings', EMBEDDING_MODELS, backend.embeddings ?? createLexicalEmbeddings(), embeddingPrice(config.embeddingPrices))
    // Moderation is free on either engine (the reference's moderations cost nothing either).
    .register('moderation', MODERATION_MODELS, backend.moderation ?? createOfflineModeration({ imageWorkers: config.imageModerationWorkers }), () => ({ inputPerMTok: 0, outputPerMTok: 0 }))
    // Decisions are paid on input (SPEC): the answer tokens cost nothing.
    .register('decisions', DECISION_MODELS, backend.decisions ?? createOfflineDecisions(), () => ({ inputPerMTok: config.decisionPriceInputPerMTok, outputPerMTok: 0 }))
    // Transcriptions are paid per minute of audio (TRANSCRIPTION_PRICE_PER_MINUTE; an upstream's table per model).
    .register('transcription', TRANSCRIPTION_MODELS, backend.transcription?.provider ?? createOfflineTranscription(config.transcription), (m) =>
      transcriptionPrice(backend.transcription?.pricesPerMinute[m] ?? config.transcription.pricePerMinute),
    );
  // Speech is paid per input character (the reference's tts-1 is), the HD models at their own price.
  const speechPrice = (m: string) => ({ inputPerMTok: HD_SPEECH_MODELS.has(m) ? config.speech.pricePerMCharHd : config.speech.pricePerMChar, outputPerMTok: 0 });
  engines.register('speech', SPEECH_MODELS, backend.speech ?? createOfflineSpeech(config.speech.workers > 0 ? { workers: config.speech.workers } : {}), speechPrice);
  // Images: the upstream's when configured, else the offline engine; priced per image (api/images/ charges IMAGE_PRICE_*).
  engines.register('images', [IMAGE_ENGINE], backend.images ?? createOfflineImages(), () => ({ inputPerMTok: 0, outputPerMTok: 0 }));
  for (const [model, own] of Object.entries(backend.perModel ?? {})) engines.register('chat', [model], own.provider, () => own.price);
  return engines.check();
}
