import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { usdFor } from '../../../credits/pricing.ts';
import { loadUpstreamConfig, priceFor } from './config.ts';

const base = { UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1', UPSTREAM_MODEL_AGENT: 'qwen3-8b' };

/** Asserts that `fn` throws an Error whose message matches `re`. */
function throwsMessage(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.match(err.message, re);
    return true;
  });
}

function tempFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'upstream-config-'));
  const path = join(dir, 'upstream.json');
  writeFileSync(path, content);
  return path;
}

describe('loadUpstreamConfig', () => {
  it('returns undefined without a base URL (offline engine)', () => {
    assert.equal(loadUpstreamConfig({}), undefined);
    assert.equal(loadUpstreamConfig({ UPSTREAM_BASE_URL: '', UPSTREAM_MODEL_AGENT: 'x' }), undefined);
  });

  it('a key without a base URL is an error naming both, never the key', () => {
    const both = /^UPSTREAM_API_KEY: set without UPSTREAM_BASE_URL \(set UPSTREAM_BASE_URL to use the upstream, or unset UPSTREAM_API_KEY\)$/;
    throwsMessage(() => loadUpstreamConfig({ UPSTREAM_API_KEY: 'sk-lonely-key' }), both);
    throwsMessage(() => loadUpstreamConfig({ UPSTREAM_BASE_URL: '  ', UPSTREAM_API_KEY: 'sk-lonely-key' }), both);
    throwsMessage(() => loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: tempFile('{"apiKey":"sk-lonely-key"}') }), /^UPSTREAM_API_KEY \(apiKey in UPSTREAM_CONFIG_FILE\): set without UPSTREAM_BASE_URL/);
    assert.equal(loadUpstreamConfig({ UPSTREAM_API_KEY: '' }), undefined, 'an empty variable is unset');
  });

  it('applies the defaults', () => {
    const config = loadUpstreamConfig({ ...base, UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1/' });
    assert.ok(config);
    assert.deepEqual(config, {
      baseUrl: 'http://127.0.0.1:8000/v1',
      models: { agent: 'qwen3-8b', 'agent-think': 'qwen3-8b' },
      prices: {
        agent: { inputPerMTok: 0, outputPerMTok: 0 },
        'agent-think': { inputPerMTok: 0, outputPerMTok: 0 },
      },
      timeoutMs: 120_000,
      connectTimeoutMs: 30_000,
      maxRetries: 2,
      cacheControl: false,
      reasoningModels: [],
      embeddings: 'upstream',
      moderation: 'offline',
      decisions: 'offline',
      decisionModels: {},
      speech: 'offline',
      speechModels: {},
      transcription: 'offline',
      transcriptionModels: {},
      transcriptionPrices: {},
      images: 'offline',
      imageModel: 'gpt-image-1',
    });
    assert.equal(config.apiKey, undefined);
    assert.deepEqual(config.headers, {});
  });

  it('reads every variable', () => {
    const config = loadUpstreamConfig({
      ...base,
      UPSTREAM_API_KEY: 'sk-test',
      UPSTREAM_MODEL_AGENT_THINK: 'qwen3-32b',
      UPSTREAM_PRICE_INPUT_PER_MTOK: '0.1',
      UPSTREAM_PRICE_OUTPUT_PER_MTOK: '0.4',
      UPSTREAM_PRICE_INPUT_PER_MTOK_THINK: '0.5',
      UPSTREAM_PRICE_OUTPUT_PER_MTOK_THINK: '2',
      UPSTREAM_HEADERS: '{"HTTP-Referer":"https://example.com","X-Title":"agent-api"}',
      UPSTREAM_TIMEOUT_MS: '60000',
      UPSTREAM_CONNECT_TIMEOUT_MS: '5000',
      UPSTREAM_MAX_RETRIES: '0',
      UPSTREAM_REASONING_MODELS: 'qwen3-32b, deepseek-r1',
      UPSTREAM_EMBEDDINGS: 'offline',
    });
    assert.ok(config);
    assert.equal(config.apiKey, 'sk-test');
    assert.deepEqual(config.headers, { 'HTTP-Referer': 'https://example.com', 'X-Title': 'agent-api' });
    assert.deepEqual(config.models, { agent: 'qwen3-8b', 'agent-think': 'qwen3-32b' });
    assert.deepEqual(priceFor(config, 'agent'), { inputPerMTok: 0.1, outputPerMTok: 0.4 });
    assert.deepEqual(priceFor(config, 'agent-think'), { inputPerMTok: 0.5, outputPerMTok: 2 });
    assert.equal(config.timeoutMs, 60_000);
    assert.equal(config.connectTimeoutMs, 5000);
    assert.equal(config.maxRetries, 0);
    assert.deepEqual(config.reasoningModels, ['qwen3-32b', 'deepseek-r1']);
    assert.equal(config.embeddings, 'offline');
  });

  it('think prices default to the agent prices; an empty reasoning list means none', () => {
    const config = loadUpstreamConfig({ ...base, UPSTREAM_PRICE_INPUT_PER_MTOK: '1', UPSTREAM_REASONING_MODELS: '' });
    assert.ok(config);
    assert.deepEqual(priceFor(config, 'agent-think'), { inputPerMTok: 1, outputPerMTok: 0 });
    assert.deepEqual(config.reasoningModels, []);
  });

  it('keeps the API key and headers out of JSON and inspect output', () => {
    const config = loadUpstreamConfig({ ...base, UPSTREAM_API_KEY: 'sk-very-secret', UPSTREAM_HEADERS: '{"x-key":"hdr-secret"}' });
    assert.ok(config);
    for (const text of [JSON.stringify(config), inspect(config, { depth: 5 })]) {
      assert.ok(!text.includes('sk-very-secret'), text);
      assert.ok(!text.includes('hdr-secret'), text);
    }
  });

  it('computes a cost from the price table', () => {
    assert.equal(usdFor({ inputPerMTok: 2, outputPerMTok: 8 }, { inputTokens: 1_000_000, outputTokens: 500_000 }), 6);
  });

  describe('invalid values throw naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ UPSTREAM_BASE_URL: 'not a url' }, /^UPSTREAM_BASE_URL: must be an http:\/\/ or https:\/\/ URL$/],
      [{ UPSTREAM_BASE_URL: 'ftp://example.com/v1' }, /^UPSTREAM_BASE_URL: must be an http/],
      [{ UPSTREAM_BASE_URL: 'https://user:pw@example.com/v1' }, /^UPSTREAM_BASE_URL: must not contain credentials/],
      [{ UPSTREAM_MODEL_AGENT: '' , UPSTREAM_MODEL_AGENT_THINK: 'x' }, /^UPSTREAM_MODEL_AGENT: required when UPSTREAM_BASE_URL is set/],
      [{ UPSTREAM_PRICE_INPUT_PER_MTOK: '-0.5' }, /^UPSTREAM_PRICE_INPUT_PER_MTOK: must not be negative$/],
      [{ UPSTREAM_PRICE_OUTPUT_PER_MTOK: 'free' }, /^UPSTREAM_PRICE_OUTPUT_PER_MTOK: must be a number$/],
      [{ UPSTREAM_PRICE_OUTPUT_PER_MTOK_THINK: '-1' }, /^UPSTREAM_PRICE_OUTPUT_PER_MTOK_THINK: must not be negative$/],
      [{ UPSTREAM_HEADERS: '{"X-Title": agent}' }, /^UPSTREAM_HEADERS: must be a JSON object of header names to string values$/],
      [{ UPSTREAM_HEADERS: '["a"]' }, /^UPSTREAM_HEADERS: must be a JSON object/],
      [{ UPSTREAM_HEADERS: '{"X-Count": 3}' }, /^UPSTREAM_HEADERS: header values must be strings$/],
      [{ UPSTREAM_HEADERS: '{"bad name": "x"}' }, /^UPSTREAM_HEADERS: contains an invalid header name$/],
      [{ UPSTREAM_TIMEOUT_MS: '0' }, /^UPSTREAM_TIMEOUT_MS: must be greater than 0$/],
      [{ UPSTREAM_CONNECT_TIMEOUT_MS: '2.5' }, /^UPSTREAM_CONNECT_TIMEOUT_MS: must be an integer$/],
      [{ UPSTREAM_MAX_RETRIES: '-1' }, /^UPSTREAM_MAX_RETRIES: must not be negative$/],
      [{ UPSTREAM_EMBEDDINGS: 'maybe' }, /^UPSTREAM_EMBEDDINGS: must be upstream or offline$/],
      [{ UPSTREAM_MODERATION: 'yes' }, /^UPSTREAM_MODERATION: must be upstream or offline$/],
      [{ UPSTREAM_DECISIONS: 'on' }, /^UPSTREAM_DECISIONS: must be upstream or offline$/],
      [{ UPSTREAM_DECISION_MODELS: '{"gpt-4o": "x"}' }, /^UPSTREAM_DECISION_MODELS: keys must be decision model ids/],
      [{ UPSTREAM_DECISION_MODELS: '{"gpt-6-luna": ""}' }, /^UPSTREAM_DECISION_MODELS: must not be empty$/],
      [{ UPSTREAM_DECISION_MODELS: 'gpt-6-luna=x' }, /^UPSTREAM_DECISION_MODELS: must be a JSON object/],
    ];
    for (const [env, message] of cases) {
      it(Object.keys(env).join(', '), () => {
        throwsMessage(() => loadUpstreamConfig({ ...base, ...env }), message);
      });
    }

    it('never echoes the header value', () => {
      assert.throws(
        () => loadUpstreamConfig({ ...base, UPSTREAM_HEADERS: '{"Authorization": "Bearer sk-x' }),
        (err: Error) => !err.message.includes('sk-x') && err.message.startsWith('UPSTREAM_HEADERS:'),
      );
    });
  });

  describe('UPSTREAM_CONFIG_FILE', () => {
    it('reads camelCase keys; the environment wins', () => {
      const path = tempFile(
        JSON.stringify({
          baseUrl: 'https://openrouter.ai/api/v1',
          apiKey: 'sk-file',
          modelAgent: 'qwen/qwen3-8b',
          modelAgentThink: 'deepseek/deepseek-r1',
          priceInputPerMtok: 0.2,
          priceOutputPerMtokThink: 2.5,
          headers: { 'X-Title': 'agent-api' },
          timeoutMs: 90000,
          reasoningModels: ['deepseek/deepseek-r1', 'openai/o4-mini'],
        }),
      );
      const config = loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: path, UPSTREAM_TIMEOUT_MS: '1000' });
      assert.ok(config);
      assert.equal(config.baseUrl, 'https://openrouter.ai/api/v1');
      assert.equal(config.apiKey, 'sk-file');
      assert.deepEqual(config.models, { agent: 'qwen/qwen3-8b', 'agent-think': 'deepseek/deepseek-r1' });
      assert.deepEqual(config.prices['agent-think'], { inputPerMTok: 0.2, outputPerMTok: 2.5 });
      assert.deepEqual(config.headers, { 'X-Title': 'agent-api' });
      assert.equal(config.timeoutMs, 1000);
      assert.deepEqual(config.reasoningModels, ['deepseek/deepseek-r1', 'openai/o4-mini']);
    });

    it('names the variable and the file key in errors', () => {
      const path = tempFile(JSON.stringify({ baseUrl: 'http://x/v1', modelAgent: 'm', priceInputPerMtok: -3 }));
      throwsMessage(
        () => loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: path }),
        /^UPSTREAM_PRICE_INPUT_PER_MTOK \(priceInputPerMtok in UPSTREAM_CONFIG_FILE\): must not be negative$/,
      );
    });

    it('rejects unknown keys, bad JSON and missing files', () => {
      throwsMessage(() => loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: tempFile('{"baseURL": "http://x"}') }), /UPSTREAM_CONFIG_FILE: unknown key "baseURL"/);
      throwsMessage(() => loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: tempFile('{nope') }), /UPSTREAM_CONFIG_FILE: .* is not valid JSON/);
      throwsMessage(() => loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: tempFile('[1]') }), /UPSTREAM_CONFIG_FILE: .* must contain a JSON object/);
      throwsMessage(() => loadUpstreamConfig({ UPSTREAM_CONFIG_FILE: '/nonexistent/upstream.json' }), /UPSTREAM_CONFIG_FILE: cannot read/);
    });
  });
});

it('transcription: upstream or offline, a model map and prices per minute keyed by transcription ids', () => {
  const base = { UPSTREAM_BASE_URL: 'http://127.0.0.1:8000/v1', UPSTREAM_MODEL_AGENT: 'm' };
  const c = loadUpstreamConfig({ ...base, UPSTREAM_TRANSCRIPTION: 'upstream', UPSTREAM_TRANSCRIPTION_MODELS: '{"agent-transcribe": "Systran/faster-whisper-small"}', UPSTREAM_TRANSCRIPTION_PRICES: '{"whisper-1": 0.012}' })!;
  assert.equal(c.transcription, 'upstream');
  assert.deepEqual(c.transcriptionModels, { 'agent-transcribe': 'Systran/faster-whisper-small' });
  assert.deepEqual(c.transcriptionPrices, { 'whisper-1': 0.012 });
  assert.throws(() => loadUpstreamConfig({ ...base, UPSTREAM_TRANSCRIPTION: 'both' }), /UPSTREAM_TRANSCRIPTION: must be upstream or offline/);
  assert.throws(() => loadUpstreamConfig({ ...base, UPSTREAM_TRANSCRIPTION_MODELS: '{"tts-1": "x"}' }), /UPSTREAM_TRANSCRIPTION_MODELS: keys must be transcription model ids/);
  assert.throws(() => loadUpstreamConfig({ ...base, UPSTREAM_TRANSCRIPTION_PRICES: '{"whisper-1": -1}' }), /UPSTREAM_TRANSCRIPTION_PRICES/);
});
