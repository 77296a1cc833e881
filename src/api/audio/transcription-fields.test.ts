// POST /v1/audio/transcriptions and /translations on the offline engine through the
// official openai SDK: the containers judged by content, translations (English passes
// through; srt and vtt refused), each refused, limited and without-effect row, English only,
// a file that is not audio and an upload one byte over 25 MB refused naming `file`, the
// Audio switch, and /v1/capabilities saying plainly what the offline engine is.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';
import { checkRising, credits, refused } from './transcription-checks.test-support.ts';
import { encode, joinWavs, SENTENCES, speak, wordRecall } from './transcription-speech.test-support.ts';

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
