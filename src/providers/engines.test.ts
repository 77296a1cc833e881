// Engines by capability: registered for what they do and which model ids, found per
// model id with their price; a later registration of a model takes it over; every model
// id of every capability must have one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../config.ts';
import { CHAT_MODELS, DECISION_MODELS, MODERATION_MODELS, SPEECH_MODELS, TRANSCRIPTION_MODELS } from '../contract/models.ts';
import { createOfflineTranscription } from './inline/transcription/offline-transcription.ts';
import { transcriptionPrice } from './engines.ts';
import { createOfflineDecisions } from './inline/decision/offline-decisions.ts';
import { createOfflineModeration } from './inline/moderation/offline-moderation.ts';
import { createOfflineImages } from './inline/images/offline-images.ts';
import { Engines, IMAGE_ENGINE } from './engines.ts';
import { createChatBackend, enginesFor } from './index.ts';
import { createOfflineEngine } from './inline/offline/index.ts';
import { createLexicalEmbeddings } from './inline/lexical-embeddings.ts';
import type { ChatProvider } from './types.ts';

const engine = (name: string): ChatProvider => ({ name, chat: () => (async function* () {})(), complete: () => (async function* () {})() });

test('an engine per capability and model id, with its price; a model can have its own', () => {
  const offline = engine('offline');
  const upstream = engine('upstream');
  const engines = new Engines()
    .register('chat', CHAT_MODELS, offline, () => ({ inputPerMTok: 0, outputPerMTok: 0 }))
    .register('chat', ['agent-think'], upstream, () => ({ inputPerMTok: 3, outputPerMTok: 15 }))
    .register('embeddings', ['agent-embed', 'agent-embed-large', 'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002'], createLexicalEmbeddings(), () => ({ inputPerMTok: 0.02, outputPerMTok: 0 }))
    .register('moderation', MODERATION_MODELS, createOfflineModeration(), () => ({ inputPerMTok: 0, outputPerMTok: 0 }))
    .register('decisions', DECISION_MODELS, createOfflineDecisions(), () => ({ inputPerMTok: 0.5, outputPerMTok: 0 }))
    .register('speech', SPEECH_MODELS, { name: 'speech', speak: () => Promise.reject(new Error('not here')) }, () => ({ inputPerMTok: 15, outputPerMTok: 0 }))
    .register('transcription', TRANSCRIPTION_MODELS, createOfflineTranscription({ concurrency: 1, queue: 1, timeoutMs: 1000, pocketsphinx: 'pocketsphinx_continuous' }), () => transcriptionPrice(0.006))
    .register('images', [IMAGE_ENGINE], createOfflineImages(), () => ({ inputPerMTok: 0, outputPerMTok: 0 }))
    .check();
  assert.equal(engines.for('chat', 'agent'), offline);
  assert.equal(engines.for('chat', 'agent-think'), upstream);
  assert.deepEqual(engines.price('chat', 'agent-think'), { inputPerMTok: 3, outputPerMTok: 15 });
  assert.equal(engines.for('embeddings', 'agent-embed').name, 'lexical');
  assert.deepEqual(new Set(engines.all().map((e) => (e as { name: string }).name)), new Set(['offline', 'upstream', 'lexical', 'speech']));
  assert.equal(engines.for('moderation', 'agent-moderation').name, 'offline');
  assert.equal(engines.for('decisions', 'gpt-6-luna').readsImages, false);
  assert.equal(engines.for('images', IMAGE_ENGINE).name, 'offline');
  assert.throws(() => engines.for('chat', 'agent-embed'), /no chat engine serves the model agent-embed/);
  // Per minute of audio, as USD per million seconds: 60 s cost the minute's price.
  assert.equal(engines.for('transcription', 'whisper-1').name, 'offline');
  assert.ok(Math.abs((60 * engines.price('transcription', 'whisper-1').inputPerMTok) / 1e6 - 0.006) < 1e-12);
});

test('a capability with a model id nobody serves stops start-up', () => {
  assert.throws(() => new Engines().register('chat', ['agent'], engine('x'), () => ({ inputPerMTok: 0, outputPerMTok: 0 })).check(), /no chat engine for agent-think/);
});

test("the configuration's engines: the chat backend for chat models, the built-in embedder at the configured prices", () => {
  const config = loadConfig({ DATA_DIR: '/tmp/agent-api-engines-test' });
  const chat = engine('configured');
  const engines = enginesFor(config, { provider: chat, price: () => ({ inputPerMTok: 1, outputPerMTok: 2 }), describe: 'test' });
  for (const model of CHAT_MODELS) assert.equal(engines.for('chat', model), chat);
  assert.equal(engines.price('embeddings', 'agent-embed').inputPerMTok, config.embeddingPrices['text-embedding-3-small']);
  assert.equal(engines.price('embeddings', 'agent-embed-large').inputPerMTok, config.embeddingPrices['text-embedding-3-large']);
});

test('UPSTREAM_MODEL_AGENT_THINK=offline: agent goes upstream, agent-think stays on the offline engine at its offline price', () => {
  const config = loadConfig({ DATA_DIR: '/tmp/agent-api-engines-test' });
  const env = { UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1', UPSTREAM_MODEL_AGENT: 'served-model', UPSTREAM_MODEL_AGENT_THINK: 'offline', UPSTREAM_PRICE_INPUT_PER_MTOK: '5' };
  const backend = createChatBackend(config, env);
  const engines = enginesFor(config, backend);
  assert.equal(engines.for('chat', 'agent'), backend.provider);
  assert.notEqual(engines.for('chat', 'agent-think'), backend.provider);
  assert.equal(engines.for('chat', 'agent-think').name, createOfflineEngine().name);
  assert.equal(engines.price('chat', 'agent').inputPerMTok, 5);
  assert.deepEqual(engines.price('chat', 'agent-think'), config.offlinePrices['agent-think']);
  assert.match(backend.describe, /agent-think offline/);
});
