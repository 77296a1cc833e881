// The /healthz poller (a worker thread, healthz-worker.mjs) and its figures: every
// answer within 100 ms is the one time bound.
import { Worker } from 'node:worker_threads';
import type { Runner } from './runner.ts';

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
  /** mean time between polls (20 ms asked; a loaded machine stretches it) */
  everyMs: number;
  /** the slowest samples, with the requests in flight then */
  worst: (Sample & { inFlight: string[] })[];
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

  /** Figures over the samples, optionally without those in `exclude` windows (hangs, restarts). */
  stats(runner: Runner, exclude: readonly [number, number][] = []): HealthzStats {
    const samples = this.samples.filter((x) => !exclude.some(([from, to]) => x.at + x.ms >= from && x.at <= to));
    const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
    const worst = [...samples].sort((a, b) => b.ms - a.ms).slice(0, 10);
    return {
      samples: samples.length,
      failed: samples.filter((s) => !s.ok).length,
      over: samples.filter((s) => s.ms > HEALTHZ_BOUND_MS).length,
      maxMs: ms.at(-1) ?? 0,
      p99Ms: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? 0,
      everyMs: this.samples.length > 1 ? (this.samples.at(-1)!.at - this.samples[0]!.at) / (this.samples.length - 1) : 0,
      worst: worst.map((w) => ({
        ...w,
        // What the server was busy with while this poll waited.
        inFlight: runner.overlapping(w.at, w.at + w.ms).map((s) => `${s.c.category} ${s.c.op.id}: ${s.c.note.slice(0, 100)}`).slice(0, 8),
      })),
    };
  }
}
