// Shared by the jobs tests: stores on a scratch database, runners with short intervals,
// a log that keeps its lines, and bounded polling (no test asserts on wall-clock time).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.ts';
import { openStore, type Store } from '../store/db.ts';
import { JobQueue } from './job-queue.ts';
import { JobRunner, type JobLog, type RunnerOptions } from './job-runner.ts';

export function databaseAt(url: string): Config['database'] {
  return url.startsWith('sqlite:') ? { kind: 'sqlite', file: url.slice('sqlite:'.length) } : { kind: 'postgres', url };
}

/**
 * Two stores on one database, as two instances would have: on PostgreSQL two pools; on
 * SQLite the same store twice (one process owns the file's only connection).
 */
export async function twoStores(url: string): Promise<{ first: Store; second: Store; close(): Promise<void> }> {
  const first = await openStore(databaseAt(url));
  const second = first.kind === 'postgres' ? await openStore(databaseAt(url)) : first;
  return {
    first,
    second,
    close: async () => {
      if (second !== first) await second.close();
      await first.close();
    },
  };
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

export function recordingLog(): JobLog & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg: string) => void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

export function testRunner(queue: JobQueue, instanceId: string, options: Partial<RunnerOptions> = {}): JobRunner {
  return new JobRunner(queue, { instanceId, log: recordingLog(), pollMs: 10, leaseMs: 2_000, stopGraceMs: 2_000, ...options });
}

/** Polls `check` until it holds, at most `attempts` times. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, attempts = 1_000, stepMs = 10): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await sleep(stepMs);
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** A promise with its resolve, for handlers the test releases. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
