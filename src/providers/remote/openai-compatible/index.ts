// The OpenAI-compatible upstream provider (vLLM, Ollama, OpenRouter, OpenAI, ...).
export { loadUpstreamConfig, priceFor } from './config.ts';
export type { UpstreamConfig } from './config.ts';
export { createOpenAICompatibleProvider } from './provider.ts';
export type { OpenAICompatibleProvider, ProviderOptions } from './provider.ts';
