// Runs the server as a user does, `node scripts/start.mjs` (what `npm start` runs: src/
// compiled once per change of the sources)
// or any other command line, as a child process with a minimal environment: for tests of
// what a user sees (the first-start banner, the summary line, start-up errors, exit codes).
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { reap, signal, START_DEADLINE_MS, track } from './children.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const MAIN = [process.execPath, 'scripts/start.mjs'];

/** Only what a shell gives any process, plus `extra`: no variable of the test run leaks in. */
export function userEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME ?? os.tmpdir(), ...extra };
}

export interface Output {
  stdout: string;
  stderr: string;
}

export interface ServerProcess {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** The fields of the summary log line (url, engine, database, admin). */
  summary: Record<string, string>;
  output(): Output;
  /** Polls the output until `test` holds (bounded), e.g. for the banner after the summary line. */
  waitForOutput(test: (o: Output) => boolean, what: string): Promise<Output>;
  /** SIGTERM to the process group; resolves with the exit code. */
  stop(): Promise<number | null>;
}


function collect(child: ChildProcess): () => Output {
  const out: Output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out.stderr += c.toString()));
  return () => ({ ...out });
}

async function poll<T>(read: () => T | undefined, what: string, failed: () => string | undefined, deadlineMs = START_DEADLINE_MS): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    const why = failed();
    if (why) throw new Error(`${what}: ${why}`);
    if (Date.now() > until) throw new Error(`${what}: not seen within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts the server and waits for its summary line ("agent-api serving ..."), at most
 * `deadlineMs`; when it gives up, the process group it started is killed first.
 */
export async function startServerProcess(env: NodeJS.ProcessEnv, command: string[] = MAIN, options: { deadlineMs?: number } = {}): Promise<ServerProcess> {
  // Its own process group, so stop() reaches the server behind `npm start` too.
  const child = track(spawn(command[0]!, command.slice(1), { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }), true);
  const output = collect(child);
  let exitCode: number | null | undefined;
  // 'close': the process exited and its output is all read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve((exitCode = code))));
  const failed = () => (exitCode !== undefined ? `the process exited with ${exitCode}:\n${output().stdout}\n${output().stderr}` : undefined);

  let summary: Record<string, string>;
  try {
    summary = await poll(
      () => {
        for (const line of output().stdout.split('\n')) {
          if (!line.includes('agent-api serving')) continue;
          return JSON.parse(line) as Record<string, string>;
        }
        return undefined;
      },
      'the summary line',
      failed,
      options.deadlineMs,
    );
  } catch (err) {
    await reap(child, true);
    throw err;
  }
  const origin = new URL(summary.url!).origin;
  let stopping: Promise<number | null> | undefined;
  return {
    origin,
    summary,
    output,
    waitForOutput: (test, what) => poll(() => (test(output()) ? output() : undefined), what, failed),
    stop: () =>
      (stopping ??= (async () => {
        if (exitCode === undefined) signal(child, true, 'SIGTERM');
        const timer = setTimeout(() => exitCode === undefined && signal(child, true, 'SIGKILL'), 20_000);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
          // Whatever the server left in its group (a child of `npm start`).
          signal(child, true, 'SIGKILL');
        }
      })()),
  };
}

/** Runs a process to its end (a start that must fail), bounded. */
export async function runToExit(env: NodeJS.ProcessEnv, command: string[] = MAIN): Promise<Output & { code: number | null }> {
  const child = track(spawn(command[0]!, command.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  const output = collect(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), START_DEADLINE_MS);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return { code, ...output() };
}

/** The secrets of a first-start banner, if the output has one. */
export function bannerSecrets(stderr: string): { apiKey?: string; adminToken?: string } {
  const apiKey = /^ ?API key: (\S+)$/m.exec(stderr)?.[1];
  const adminToken = /^ ?Admin token: (\S+)$/m.exec(stderr)?.[1];
  return { ...(apiKey ? { apiKey } : {}), ...(adminToken ? { adminToken } : {}) };
}
