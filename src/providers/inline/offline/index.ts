// The built-in deterministic offline model: the default provider.
export { createOfflineEngine } from './engine.ts';
