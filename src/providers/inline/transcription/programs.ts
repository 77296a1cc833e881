// The external programs of the offline transcription engine (ffmpeg, pocketsphinx_continuous):
// each run by execFile with an argument array (never a shell), a time limit (killed with
// SIGKILL past it), the caller's abort signal (a client gone kills its program), bounded
// output, and through a small queue that bounds how many run at once and how many may
// wait (past that: 503 service_unavailable, so a burst never piles up unbounded work).
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { serviceUnavailable } from '../../../errors.ts';

/**
 * The programs' niceness: decoding and recognition take whole cores for seconds, and at the
 * event loop's own priority they starve it (the fuzz gate saw /healthz wait 124 ms behind one
 * PocketSphinx start on 2 cores); lowered, they take what the service leaves.
 */
const PROGRAM_NICE = Math.min(19, os.getPriority() + 10);

export interface ProgramOutcome {
  stdout: string;
  stderr: string;
}

/** Why a program did not end well. */
export class ProgramFailure extends Error {
  override name = 'ProgramFailure';
  constructor(
    readonly kind: 'missing' | 'timeout' | 'exit',
    message: string,
    readonly stderr = '',
  ) {
    super(message);
  }
}

/**
 * Runs `file` with `args`. Rejects with the signal's reason when it aborts, with a
 * ProgramFailure when the program is missing, runs past `timeoutMs` or exits non-zero.
 */
export function runProgram(file: string, args: readonly string[], opts: { timeoutMs: number; signal: AbortSignal; maxBuffer?: number }): Promise<ProgramOutcome> {
  opts.signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { timeout: opts.timeoutMs, killSignal: 'SIGKILL', signal: opts.signal, maxBuffer: opts.maxBuffer ?? 16 * 1024 * 1024, encoding: 'utf8', windowsHide: true, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' } },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr });
        if (opts.signal.aborted) return reject(opts.signal.reason);
        const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string };
        if (e.code === 'ENOENT' || e.code === 'EACCES') return reject(new ProgramFailure('missing', `${file} cannot be run (${e.code})`));
        if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new ProgramFailure('exit', `${file} wrote more output than expected`));
        if (e.killed) return reject(new ProgramFailure('timeout', `${file} ran past its time limit of ${opts.timeoutMs} ms`, stderr));
        reject(new ProgramFailure('exit', `${file} ended with ${e.signal ?? `status ${String(e.code)}`}`, String(stderr)));
      },
    );
    if (child.pid !== undefined) {
      try {
        os.setPriority(child.pid, PROGRAM_NICE);
      } catch {
        // gone already, or not allowed: it runs at the service's priority
      }
    }
  });
}

/** At most `limit` jobs at once, at most `maxWaiting` waiting; more are refused with a 503. */
export class ProgramQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
  ) {}

  async run<T>(signal: AbortSignal, job: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.maxWaiting) {
        throw serviceUnavailable(`Too many transcriptions are running here (${this.limit} at once, ${this.maxWaiting} waiting); try again shortly.`);
      }
      // The slot is handed over by the job that ends (running stays counted), so a newcomer cannot slip in between.
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(go);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(go);
      });
    } else {
      this.running++;
    }
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Jobs running and waiting (tests, metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}

/** The ffmpeg binary of the npm package @ffmpeg-installer/ffmpeg, or why there is none. */
export function bundledFfmpeg(): { path: string } | { missing: string } {
  try {
    const found = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string };
    return { path: found.path };
  } catch (err) {
    // The package throws a string when the platform has no binary.
    return { missing: `the ffmpeg of the npm package @ffmpeg-installer/ffmpeg is not here (${String(err instanceof Error ? err.message : err).slice(0, 160)}): run npm install` };
  }
}
