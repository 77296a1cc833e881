// The OpenAI-compatible upstream provider (vLLM, Ollama, OpenRouter, OpenAI, ...).
export { loadUpstreamConfig, priceFor, costFromPrice } from './config.ts';
export type { UpstreamConfig, Price } from './config.ts';
export { createOpenAICompatibleProvider } from './provider.ts';
export type { OpenAICompatibleProvider, ProviderOptions } from './provider.ts';
