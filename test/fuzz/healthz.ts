// The /healthz poller (a worker thread, healthz-worker.mjs) and its figures: every
// answer within 100 ms is the one time bound.
import { Worker } from 'node:worker_threads';
import type { Case } from './case.ts';
import type { Runner, Sent } from './runner.ts';

export const HEALTHZ_BOUND_MS = 100;

export interface Sample {
  /** epoch ms the poll started */
  at: number;
  ms: number;
  ok: boolean;
  error?: string;
}

export interface HealthzStats {
  samples: number;
  failed: number;
  over: number;
  maxMs: number;
  p99Ms: number;
  /** median time between polls (20 ms asked; a loaded machine stretches it) */
  everyMs: number;
  /**
   * Stalls: polls over the bound (or failed) whose waits overlap, merged into one
   * window each, longest first, with the requests in flight then.
   */
  stalls: Stall[];
}

export interface Stall {
  at: number;
  ms: number;
  polls: number;
  failed: number;
  inFlight: Sent[];
  /** the case that stalled /healthz again when replayed alone, and for how long */
  culprit?: { c: Case; ms: number; answer: string };
}

export class HealthzPoller {
  readonly samples: Sample[] = [];
  /** epoch ms of the last good answer (or of the last (re)start) */
  lastHealthy = Date.now();
  private readonly worker: Worker;

  constructor(pollMs: number) {
    this.worker = new Worker(new URL('./healthz-worker.mjs', import.meta.url), { workerData: { pollMs } });
    this.worker.on('message', (m: Sample & { type: string }) => {
      if (m.type !== 'sample') return;
      const { type: _, ...sample } = m;
      this.samples.push(sample);
      if (m.ok) this.lastHealthy = Math.max(this.lastHealthy, m.at + m.ms);
    });
  }

  /** Polls this port from now on (a started or restarted server). */
  watch(port: number): void {
    this.lastHealthy = Date.now();
    this.worker.postMessage({ type: 'port', port });
  }

  /** No polls while the server is being restarted or stopped on purpose. */
  pause(): void {
    this.worker.postMessage({ type: 'pause' });
  }

  async stop(): Promise<void> {
    this.worker.postMessage({ type: 'stop' });
    await this.worker.terminate();
  }

  /**
   * Pins each of the longest stalls on one case: its requests in flight are replayed
   * alone, in turn, while the poller watches; the one that stalls /healthz longest is it.
   */
  async isolate(stalls: Stall[], runner: Runner, max = 5): Promise<void> {
    for (const stall of stalls.slice(0, max)) {
      for (const s of stall.inFlight.slice(0, 8)) {
        const from = Date.now();
        const hung = await runner.replayAlone(s.c);
        await new Promise((r) => setTimeout(r, 3 * HEALTHZ_BOUND_MS));
        const worst = hung ? Infinity : Math.max(0, ...this.samples.filter((x) => x.at >= from).map((x) => (x.ok ? x.ms : Infinity)));
        // The longest stall among the suspects: several may stall a little, one a lot.
        if (worst > HEALTHZ_BOUND_MS && worst > (stall.culprit?.ms ?? 0)) {
          const answer = [...runner.replayed].reverse().find((r) => r.c === s.c)?.outcome.preview;
          stall.culprit = { c: s.c, ms: worst, answer: hung ? 'none: the server hung' : (answer ?? '') };
        }
        if (hung) break;
      }
    }
  }

  /** Figures over the samples, optionally without those in `exclude` windows (hangs, restarts). */
  stats(runner: Runner, exclude: readonly [number, number][] = []): HealthzStats {
    const samples = this.samples.filter((x) => !exclude.some(([from, to]) => x.at + x.ms >= from && x.at <= to));
    const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
    return {
      samples: samples.length,
      failed: samples.filter((s) => !s.ok).length,
      over: samples.filter((s) => s.ms > HEALTHZ_BOUND_MS).length,
      maxMs: ms.at(-1) ?? 0,
      p99Ms: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? 0,
      everyMs: medianGap(this.samples),
      // With what the server was busy while those polls waited.
      stalls: stallsOf(samples).map((w) => ({ ...w, inFlight: runner.overlapping(w.at, w.at + w.ms) })),
    };
  }
}

function stallsOf(samples: readonly Sample[]): { at: number; ms: number; polls: number; failed: number }[] {
  const slow = samples.filter((x) => x.ms > HEALTHZ_BOUND_MS || !x.ok).sort((a, b) => a.at - b.at);
  const stalls: { at: number; end: number; polls: number; failed: number }[] = [];
  for (const x of slow) {
    const last = stalls.at(-1);
    if (last && x.at <= last.end) {
      last.end = Math.max(last.end, x.at + x.ms);
      last.polls++;
      last.failed += x.ok ? 0 : 1;
    } else stalls.push({ at: x.at, end: x.at + x.ms, polls: 1, failed: x.ok ? 0 : 1 });
  }
  return stalls
    .map((w) => ({ at: w.at, ms: w.end - w.at, polls: w.polls, failed: w.failed }))
    .sort((a, b) => b.ms - a.ms);
}

function medianGap(samples: readonly Sample[]): number {
  const at = samples.map((x) => x.at).sort((a, b) => a - b);
  const gaps = at.slice(1).map((t, i) => t - at[i]!).sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)] ?? 0;
}
