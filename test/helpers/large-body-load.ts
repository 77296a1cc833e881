// One phase of large-body load, for the test and the bench: senders on one worker thread
// (large-body-senders.mjs), /healthz polled on the clock from another
// (test/fuzz/healthz-worker.mjs), so neither shares the server's event loop.
import { Worker } from 'node:worker_threads';
import { HealthzPoller } from '../fuzz/healthz.ts';

export type BodyShape = 'huge-string' | 'many-messages' | 'number-arrays' | 'nested-numbers';

export interface Sender {
  path: string;
  key: string;
  shape: BodyShape;
  /** Refused by the contract only: a field's value is wrong. */
  invalid: boolean;
}

export interface LoadResult {
  /** /healthz answers (ms), in order; failed polls are not among them. */
  healthz: number[];
  failedPolls: number;
  /** Per sender: the statuses it got, how often, and the first answer's start. */
  answers: { status: number; count: number; first: string }[][];
}

export async function runLargeBodyLoad(origin: string, senders: Sender[], durationMs: number, pollMs = 20): Promise<LoadResult> {
  const worker = new Worker(new URL('./large-body-senders.mjs', import.meta.url), { workerData: { origin, durationMs, clients: senders } });
  const poller = new HealthzPoller(pollMs);
  try {
    let from = 0;
    const answers = await new Promise<LoadResult['answers']>((resolve, reject) => {
      worker.on('message', (m: { type: string; answers?: LoadResult['answers'] }) => {
        if (m.type === 'ready') {
          poller.watch(Number(new URL(origin).port));
          from = Date.now();
          worker.postMessage({ type: 'go' });
        } else if (m.type === 'done') resolve(m.answers!);
      });
      worker.on('error', reject);
      worker.on('exit', (code) => reject(new Error(`the senders' worker exited with ${code}`)));
    });
    const to = Date.now();
    // The polls still open answer (or give up, after 2 s) before the figures are read.
    await new Promise((r) => setTimeout(r, 2_500));
    const samples = poller.samples.filter((s) => s.at >= from && s.at <= to);
    return { healthz: samples.filter((s) => s.ok).map((s) => s.ms), failedPolls: samples.filter((s) => !s.ok).length, answers };
  } finally {
    await poller.stop();
    await worker.terminate();
  }
}
