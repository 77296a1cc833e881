// The voice table: every voice name the contract takes has a voice, and README "Speech"
// shows each as it is.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createSpeech } from '../../../contract/endpoints/audio.ts';
import { fliteSettings, OFFLINE_VOICES, type OfflineVoice } from './voices.ts';

test('every voice of the contract has a Flite voice; README shows each row as it is', () => {
  const field = createSpeech.body!.fields.voice as { schema: { options: string[] } };
  assert.deepEqual(Object.keys(OFFLINE_VOICES).sort(), [...field.schema.options].sort());
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  for (const [name, v] of Object.entries(OFFLINE_VOICES) as [string, OfflineVoice][]) {
    const row = `| \`${name}\` | ${v.flite} | ${v.f0 ?? 'its own'} | ${v.stretch.toFixed(Number.isInteger(v.stretch) ? 1 : String(v.stretch).split('.')[1]!.length)} | ${v.sound} |`;
    assert.ok(readme.includes(row), `README lacks ${row}`);
  }
});

test('speed divides the pace; the pitch is kept', () => {
  assert.deepEqual(fliteSettings('eve', 2), ['-voice', 'slt', '--setf', 'int_f0_target_mean=180', '--setf', 'duration_stretch=0.5']);
  assert.deepEqual(fliteSettings('echo', 0.25), ['-voice', 'rms', '--setf', 'duration_stretch=4']);
});
