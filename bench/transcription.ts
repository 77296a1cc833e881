// The offline transcription engine's real-time factor (processing time / audio time: under
// 1 is faster than real time), on Flite-spoken Harvard sentences: the engine alone (ffmpeg
// decode, then PocketSphinx) in this process, and POST /v1/audio/transcriptions through
// the openai SDK against the service as a child process, one at a time and four at once
// (AGENT_API_TRANSCRIPTION_CONCURRENCY programs run, the rest wait). Also the word recall
// per Flite voice (bag-of-words, the measure the tests pin).
//
//   npm run bench:transcription   (BENCH_ROUNDS, default 3)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI, { toFile } from 'openai';
import { joinWavs, SENTENCES, speak, wavSeconds, wordRecall } from '../src/api/audio/transcription-speech.test-support.ts';
import { createOfflineTranscription } from '../src/providers/inline/transcription/offline-transcription.ts';
import { freePort, percentile, startChild, stopChild, serverArgs } from './lib.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';
const settings = { concurrency: 2, queue: 16, timeoutMs: 600_000, pocketsphinx: 'pocketsphinx_continuous' };
const signal = new AbortController().signal;

const engine = createOfflineTranscription(settings);
const status = engine.status();
if (!status.available) {
  console.error(`transcription is off here: ${status.reason}`);
  process.exit(1);
}

const slt = await Promise.all(SENTENCES.map((s) => speak(s, 'slt')));
const short = joinWavs(slt, 1);
const long = joinWavs([...slt, ...slt, ...slt, ...slt], 1);
const clips = [
  { name: `10 sentences, ${wavSeconds(short).toFixed(1)} s`, wav: short },
  { name: `40 sentences, ${wavSeconds(long).toFixed(1)} s`, wav: long },
];
const reference = SENTENCES.join(' ');
const fmt = (x: number) => x.toFixed(3);
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

console.log(`transcription, offline engine (ffmpeg + PocketSphinx en-US), ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}, ${rounds} rounds, medians`);
console.log('  real-time factor = processing time / audio duration (lower is faster; 1 = real time)');

// The engine alone.
for (const clip of clips) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stt-'));
  try {
    const input = path.join(dir, 'upload');
    fs.writeFileSync(input, clip.wav);
    const decode: number[] = [];
    const recognize: number[] = [];
    let seconds = 0;
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const audio = await engine.decode(input, dir, signal);
      const t1 = performance.now();
      await engine.transcribe({ task: 'transcribe', model: 'agent-transcribe', filename: 'a.wav', contentType: 'audio/wav', responseFormat: 'json' }, audio, signal);
      const t2 = performance.now();
      seconds = audio.seconds;
      decode.push((t1 - t0) / 1000);
      recognize.push((t2 - t1) / 1000);
    }
    console.log(
      `  engine alone, ${clip.name.padEnd(24)} decode ${fmt(median(decode))} s, recognize ${fmt(median(recognize))} s, real-time factor ${fmt((median(decode) + median(recognize)) / seconds)}`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// Word recall per voice.
const recalls: string[] = [];
for (const voice of ['slt', 'rms', 'awb', 'kal16']) {
  const wav = joinWavs(await Promise.all(SENTENCES.map((s) => speak(s, voice))), 1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stt-'));
  try {
    fs.writeFileSync(path.join(dir, 'upload'), wav);
    const audio = await engine.decode(path.join(dir, 'upload'), dir, signal);
    const heard = await engine.transcribe({ task: 'transcribe', model: 'agent-transcribe', filename: 'a.wav', contentType: 'audio/wav', responseFormat: 'json' }, audio, signal);
    const text = heard.kind === 'segments' ? heard.segments.flatMap((s) => s.words.map((w) => w.word)).join(' ') : '';
    recalls.push(`${voice} ${fmt(wordRecall(reference, text))}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`  word recall, 10 Harvard sentences by Flite voice: ${recalls.join(', ')}`);

// Through the service.
const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-transcription-'));
const api = await startChild(
  serverArgs(root),
  { PORT: String(port), DATA_DIR: dataDir, AGENT_API_BOOTSTRAP_KEY: key, AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789', AGENT_API_BOOTSTRAP_CREDITS: '1000000', LOG_LEVEL: 'warn' },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
try {
  const client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, timeout: 600_000 });
  const once = async (wav: Buffer, format: 'json' | 'verbose_json' = 'json') => {
    const t0 = performance.now();
    await client.audio.transcriptions.create({ file: await toFile(wav, 'speech.wav'), model: 'agent-transcribe', response_format: format });
    return (performance.now() - t0) / 1000;
  };
  await once(short);
  for (const clip of clips) {
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) times.push(await once(clip.wav, 'verbose_json'));
    console.log(`  POST /v1/audio/transcriptions, ${clip.name.padEnd(24)} ${fmt(median(times))} s, real-time factor ${fmt(median(times) / wavSeconds(clip.wav))}`);
  }
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 4 }, () => once(short)));
  const wall = (performance.now() - t0) / 1000;
  console.log(`  4 at once (10 sentences each), 2 programs at a time: ${fmt(wall)} s for ${(4 * wavSeconds(short)).toFixed(1)} s of audio, real-time factor ${fmt(wall / (4 * wavSeconds(short)))}`);
} finally {
  await stopChild(api);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
