// The offline engine streams: `speak` resolves once the first piece is made, before the
// rest (what it charges then is that piece alone), the rest follows piece by piece, and a
// caller that stops early stops it, charged for what was read aloud.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createOfflineSpeech } from './offline-speech.ts';
import { speechPieces } from './pieces.ts';

const engine = createOfflineSpeech({ workers: 1 });
after(() => engine.close?.());

const input = 'First sentence here. Second one follows. A third is next. And the fourth ends it.';
const request = (format: 'mp3' | 'pcm') => ({ model: 'agent-voice', input, format, speed: 1, fields: {} });

test('the first piece is answered before the rest is read aloud; the whole comes piece by piece', { timeout: 120_000 }, async () => {
  const pieces = speechPieces(input);
  assert.equal(pieces.length, 4);
  const audio = await engine.speak(request('pcm'), new AbortController().signal);
  assert.equal(audio.charged(), pieces[0]!.length, 'only the first piece is made');
  let chunks = 0;
  for await (const c of audio.chunks) {
    assert.ok(c.byteLength > 0);
    chunks++;
  }
  assert.equal(chunks, 4);
  assert.equal(audio.charged(), input.length);
});

test('a caller that stops early stops the engine, charged for the pieces read aloud', { timeout: 120_000 }, async () => {
  const stop = new AbortController();
  const audio = await engine.speak(request('mp3'), stop.signal);
  for await (const _ of audio.chunks) break;
  assert.ok(audio.charged() < input.length);
  // The engine still answers the next request.
  const again = await engine.speak(request('mp3'), new AbortController().signal);
  let bytes = 0;
  for await (const c of again.chunks) bytes += c.byteLength;
  assert.ok(bytes > 1000);
});
