// Chooses the model providers by configuration: an OpenAI-compatible upstream when
// UPSTREAM_BASE_URL is set, else the built-in offline engine (and the built-in
// embedder, which UPSTREAM_EMBEDDINGS=offline also keeps). Prices come with it.
import { configuredSecrets, type Config } from '../config.ts';
import type { ChatModel } from '../contract/models.ts';
import { createLexicalEmbeddings } from './inline/lexical-embeddings.ts';
import { createOfflineEngine } from './inline/offline/index.ts';
import type { Price } from '../credits/pricing.ts';
import { createOpenAICompatibleProvider, loadUpstreamConfig } from './remote/openai-compatible/index.ts';
import { CHAT_MODELS, EMBEDDING_MODELS } from '../contract/models.ts';
import { embeddingPrice, Engines } from './engines.ts';
import type { ChatProvider, EmbeddingProvider } from './types.ts';
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
}

export function createChatBackend(config: Config, env: NodeJS.ProcessEnv = process.env, observer?: UpstreamObserver): ChatBackend {
  const upstream = loadUpstreamConfig(env);
  if (upstream) {
    // The service's own secrets too: an upstream that echoes text it was given must not pass any of them on.
    const provider = createOpenAICompatibleProvider(upstream, { secrets: configuredSecrets(config), ...(observer ? { observer } : {}) });
    const host = new URL(upstream.baseUrl).host;
    const embeddings: EmbeddingProvider = upstream.embeddings === 'upstream' ? { name: 'openai-compatible', reportsUsage: true, embed: (r, s) => provider.embed(r, s) } : createLexicalEmbeddings();
    return { provider, price: (m) => upstream.prices[m], describe: host, upstream: { host, probe: (ms) => provider.probe(ms) }, embeddings };
  }
  return { provider: createOfflineEngine(), price: (m) => config.offlinePrices[m], describe: 'offline', embeddings: createLexicalEmbeddings() };
}

/**
 * The engines by capability the backend's configuration chose: its chat provider for
 * every chat model, its embedder (else the built-in one) for every embedding model,
 * each at its configured price.
 */
export function enginesFor(config: Config, backend: ChatBackend): Engines {
  return new Engines()
    .register('chat', CHAT_MODELS, backend.provider, (m) => backend.price(m as ChatModel))
    .register('embeddings', EMBEDDING_MODELS, backend.embeddings ?? createLexicalEmbeddings(), embeddingPrice(config.embeddingPrices))
    .check();
}
