// Speech's upstream settings: UPSTREAM_SPEECH (off by default) and UPSTREAM_SPEECH_MODELS
// (speech model ids only), and the model each of our ids runs upstream.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadUpstreamConfig } from './config.ts';
import { upstreamSpeechModel } from './speech.ts';

const base = { UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1', UPSTREAM_MODEL_AGENT: 'm' };

test('speech stays offline unless UPSTREAM_SPEECH says upstream; the mapping takes speech ids only', () => {
  assert.equal(loadUpstreamConfig(base)!.speech, 'offline');
  const on = loadUpstreamConfig({ ...base, UPSTREAM_SPEECH: 'upstream', UPSTREAM_SPEECH_MODELS: '{"agent-voice": "kokoro"}' })!;
  assert.equal(on.speech, 'upstream');
  assert.deepEqual(on.speechModels, { 'agent-voice': 'kokoro' });
  assert.throws(() => loadUpstreamConfig({ ...base, UPSTREAM_SPEECH: 'yes' }), /UPSTREAM_SPEECH: must be upstream or offline/);
  assert.throws(() => loadUpstreamConfig({ ...base, UPSTREAM_SPEECH_MODELS: '{"agent": "x"}' }), /UPSTREAM_SPEECH_MODELS: keys must be speech model ids/);
  assert.throws(() => loadUpstreamConfig({ ...base, UPSTREAM_SPEECH_MODELS: 'not json' }), /UPSTREAM_SPEECH_MODELS: must be a JSON object/);
});

test('agent-voice runs tts-1 unless mapped; the reference ids run under their own names', () => {
  assert.equal(upstreamSpeechModel({}, 'agent-voice'), 'tts-1');
  assert.equal(upstreamSpeechModel({}, 'gpt-4o-mini-tts'), 'gpt-4o-mini-tts');
  assert.equal(upstreamSpeechModel({ 'tts-1': 'kokoro' }, 'tts-1'), 'kokoro');
});
