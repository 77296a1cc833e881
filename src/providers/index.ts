// Chooses the model providers by configuration: an OpenAI-compatible upstream when
// UPSTREAM_BASE_URL is set, else the built-in offline engine (and the built-in
// embedder, which UPSTREAM_EMBEDDINGS=offline also keeps). Prices come with it.
import { configuredSecrets, type Config } from '../config.ts';
import type { ChatModel } from '../contract/models.ts';
import { createLexicalEmbeddings } from './inline/lexical-embeddings.ts';
import { createOfflineModeration } from './inline/moderation/offline-moderation.ts';
import { createOfflineEngine } from './inline/offline/index.ts';
import type { Price } from '../credits/pricing.ts';
import { createOpenAICompatibleProvider, loadUpstreamConfig } from './remote/openai-compatible/index.ts';
import { CHAT_MODELS, EMBEDDING_MODELS, MODERATION_MODELS } from '../contract/models.ts';
import { embeddingPrice, Engines, IMAGE_ENGINE } from './engines.ts';
import { createOfflineImages } from './inline/images/offline-images.ts';
import type { ChatProvider, EmbeddingProvider, ImageProvider } from './types.ts';
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
}

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
    const images: ImageProvider | undefined = upstream.images === 'upstream' ? { name: 'openai-compatible', create: (r, s) => provider.image(r, s) } : undefined;
    return { provider, price: (m) => upstream.prices[m], describe, upstream: { host, probe: (ms) => provider.probe(ms) }, embeddings, perModel, ...(images ? { images } : {}) };
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
    // Moderation offline, free (the reference's moderations cost nothing either); an upstream's /moderations is still to come.
    .register('moderation', MODERATION_MODELS, createOfflineModeration({ imageWorkers: config.imageModerationWorkers }), () => ({ inputPerMTok: 0, outputPerMTok: 0 }));
  // Images: the upstream's when configured, else the offline engine; priced per image (api/images/ charges IMAGE_PRICE_*).
  engines.register('images', [IMAGE_ENGINE], backend.images ?? createOfflineImages(), () => ({ inputPerMTok: 0, outputPerMTok: 0 }));
  for (const [model, own] of Object.entries(backend.perModel ?? {})) engines.register('chat', [model], own.provider, () => own.price);
  return engines.check();
}
