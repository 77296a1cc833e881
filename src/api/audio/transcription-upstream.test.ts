// Transcriptions without the offline engine: pocketsphinx absent gives a 503 naming what
// to install, charged nothing, the server still up; and an OpenAI-compatible /audio/*
// double that receives the mapped model and the exact fields as a multipart form, its
// answers passed on (JSON with svc at the configured price per minute, text formats as
// text), its failure a 502 charged nothing.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';
import { credits, refused } from './transcription-checks.test-support.ts';
import { speak, wavSeconds } from './transcription-speech.test-support.ts';

describe('a missing engine', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ AGENT_API_POCKETSPHINX: '/nonexistent/pocketsphinx_continuous' });
  });
  after(() => server.close());

  test('pocketsphinx absent: 503 naming what to install, charged nothing, the server still up', async () => {
    const { key, account_id } = await server.createKey({ permissions: { audio: true } });
    const start = await credits(server, account_id);
    const wav = await speak('Hello there.');
    for (const call of [
      async () => server.openai(key).audio.transcriptions.create({ file: await toFile(wav, 'a.wav'), model: 'agent-transcribe' }),
      async () => server.openai(key).audio.translations.create({ file: await toFile(wav, 'a.wav'), model: 'whisper-1' }),
    ]) {
      await assert.rejects(call(), (err: any) => {
        assert.equal(err.status, 503);
        assert.equal(err.error.type, 'server_error');
        assert.match(err.error.message, /pocketsphinx-en-us/);
        assert.match(err.error.message, /apt-get install pocketsphinx pocketsphinx-en-us/);
        return true;
      });
    }
    assert.equal(await credits(server, account_id), start);
    assert.equal((await server.fetch('/healthz')).status, 200);
  });
});

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  fields: [string, string][];
  file?: { name: string; type: string; bytes: Buffer };
}

describe('upstream engine (an OpenAI-compatible /audio/* double)', { timeout: 300_000 }, () => {
  let server: TestServer;
  let key: string;
  let accountId: string;
  let wav: Buffer;
  const received: Received[] = [];
  const double = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
      const got: Received = { url: req.url ?? '', headers: req.headers, fields: [] };
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') got.fields.push([name, value]);
        else got.file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
      }
      received.push(got);
      const model = form.get('model');
      if (model === 'broken-model') {
        res.writeHead(400, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: 'This model does not support audio.', type: 'invalid_request_error', code: 'model_not_supported' } }));
      }
      const format = form.get('response_format');
      if (format === 'text' || format === 'srt' || format === 'vtt') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end(format === 'text' ? 'Hello from the upstream.\n' : format === 'srt' ? '1\n00:00:00,000 --> 00:00:01,000\nHello from the upstream.\n\n' : 'WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello from the upstream.\n\n');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (format === 'verbose_json') {
        return void res.end(
          JSON.stringify({
            task: req.url?.endsWith('translations') ? 'translate' : 'transcribe',
            language: 'english',
            duration: 1.5,
            text: 'Hello from the upstream.',
            segments: [{ id: 0, seek: 0, start: 0, end: 1.5, text: ' Hello from the upstream.', tokens: [1, 2], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 }],
            words: [{ word: 'Hello', start: 0, end: 0.4 }],
          }),
        );
      }
      res.end(JSON.stringify({ text: 'Hello from the upstream.', usage: { type: 'duration', seconds: 2 } }));
    });
  });

  before(async () => {
    await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
    const { port } = double.address() as AddressInfo;
    server = await startTestServer({
      UPSTREAM_BASE_URL: `http://127.0.0.1:${port}/v1`,
      UPSTREAM_MODEL_AGENT: 'offline',
      UPSTREAM_API_KEY: 'sk-upstream-secret-0123456789',
      UPSTREAM_MAX_RETRIES: '0',
      UPSTREAM_TRANSCRIPTION: 'upstream',
      UPSTREAM_TRANSCRIPTION_MODELS: JSON.stringify({ 'agent-transcribe': 'Systran/faster-whisper-small', 'gpt-4o-mini-transcribe': 'broken-model' }),
      UPSTREAM_TRANSCRIPTION_PRICES: JSON.stringify({ 'whisper-1': 0.012 }),
      // The upstream engine decodes for the duration only: recognition is not needed here.
      AGENT_API_POCKETSPHINX: '/nonexistent/pocketsphinx_continuous',
    });
    const created = await server.createKey({ permissions: { audio: true } });
    key = created.key;
    accountId = created.account_id;
    wav = await speak('It is easy to tell the depth of a well.');
  });
  after(async () => {
    await server.close();
    double.closeAllConnections();
    await new Promise<void>((resolve) => double.close(() => resolve()));
  });

  test('the mapped model and the exact fields, as multipart; the file byte for byte', async () => {
    received.length = 0;
    const r: any = await server.openai(key).audio.transcriptions.create({
      file: await toFile(wav, 'clip.wav', { type: 'audio/wav' }),
      model: 'agent-transcribe',
      language: 'en',
      prompt: 'A well.',
      temperature: 0.2,
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    validateAgainst('CreateTranscriptionResponseVerboseJson', r);
    assert.equal(r.text, 'Hello from the upstream.');
    assert.ok(r.svc > 0);
    const got = received[0]!;
    assert.equal(got.url, '/v1/audio/transcriptions');
    assert.equal(got.headers.authorization, 'Bearer sk-upstream-secret-0123456789');
    assert.match(String(got.headers['content-type']), /^multipart\/form-data; boundary=/);
    assert.deepEqual(got.fields, [
      ['model', 'Systran/faster-whisper-small'],
      ['language', 'en'],
      ['prompt', 'A well.'],
      ['response_format', 'verbose_json'],
      ['temperature', '0.2'],
      ['timestamp_granularities[]', 'word'],
      ['timestamp_granularities[]', 'segment'],
    ]);
    assert.equal(got.file?.name, 'clip.wav');
    assert.equal(got.file?.type, 'audio/wav');
    assert.ok(got.file?.bytes.equals(wav));
  });

  test('an unmapped id goes under its own name; json comes back with svc at its own price per minute', async () => {
    received.length = 0;
    const before = await credits(server, accountId);
    const r: any = await server.openai(key).audio.transcriptions.create({ file: await toFile(wav, 'clip.wav'), model: 'whisper-1' });
    validateAgainst('CreateTranscriptionResponseJson', r);
    assert.deepEqual(received[0]!.fields, [['model', 'whisper-1'], ['response_format', 'json']]);
    // Measured here by decoding: charged per started second at $0.012 a minute.
    const seconds = Math.ceil(wavSeconds(wav));
    const expected = Math.ceil(((seconds * 0.012) / 60) * 100 * 1e6) / 1e6;
    assert.ok(Math.abs(r.svc - expected) < 2e-6, `svc ${r.svc}, expected ${expected}`);
    assert.ok(Math.abs(before - (await credits(server, accountId)) - r.svc) < 1e-6);
  });

  test('text formats pass through as text/plain; translations go to /audio/translations without transcription-only fields', async () => {
    received.length = 0;
    const client = server.openai(key);
    const srt = await client.audio.transcriptions.create({ file: await toFile(wav, 'clip.wav'), model: 'whisper-1', response_format: 'srt' });
    assert.match(srt, /^1\n00:00:00,000 --> 00:00:01,000\nHello from the upstream\.\n/);
    const t: any = await client.audio.translations.create({ file: await toFile(wav, 'clip.wav'), model: 'whisper-1', prompt: 'Hi.', response_format: 'verbose_json', temperature: 0 });
    validateAgainst('CreateTranslationResponseVerboseJson', t);
    assert.equal(received[1]!.url, '/v1/audio/translations');
    assert.deepEqual(received[1]!.fields, [['model', 'whisper-1'], ['prompt', 'Hi.'], ['response_format', 'verbose_json'], ['temperature', '0']]);
  });

  test('another language is forwarded (the upstream decides); a file that is not audio never reaches it', async () => {
    received.length = 0;
    const r: any = await server.openai(key).audio.transcriptions.create({ file: await toFile(wav, 'clip.wav'), model: 'whisper-1', language: 'de' });
    assert.equal(r.text, 'Hello from the upstream.');
    assert.deepEqual(received[0]!.fields[1], ['language', 'de']);
    await refused(server.openai(key).audio.transcriptions.create({ file: await toFile(Buffer.from('not audio'), 'clip.wav'), model: 'whisper-1' }), 400, 'file');
    assert.equal(received.length, 1);
  });

  test('an upstream failure is a 502 naming no secret, charged nothing', async () => {
    const start = await credits(server, accountId);
    await assert.rejects(server.openai(key).audio.transcriptions.create({ file: await toFile(wav, 'clip.wav'), model: 'gpt-4o-mini-transcribe' }), (err: any) => {
      assert.equal(err.status, 502);
      assert.equal(err.error.code, 'upstream_error');
      assert.match(err.error.message, /model_not_supported/);
      assert.doesNotMatch(err.error.message, /sk-upstream/);
      return true;
    });
    assert.equal(await credits(server, accountId), start);
  });
});
