// What the container tools (code_interpreter, a container's shell) need of a container
// and share: the lease a request's tool runs in (its id known before the model runs, the
// container got at first use), the runner (api/containers' ContainerRuntime is one), and
// how output is clipped for the model.
import { constants } from 'node:os';
import type { RunOptions, RunResult } from '../../sandbox/types.ts';
import type { ContainersTable } from '../../store/schema.ts';

export const CODE_INTERPRETER_FUNCTION_NAME = 'code_interpreter';
export const SHELL_FUNCTION_NAME = 'shell';

/** What the model is given back of a program's output (the item's logs keep up to the sandbox's 64 KiB). */
export const STDOUT_CHARS = 16_000;
export const STDERR_CHARS = 8_000;

/** A file a program wrote, kept as a container file (and a file of the account). */
export interface WrittenFile {
  file_id: string;
  container_id: string;
  /** /mnt/data/<path> */
  path: string;
  filename: string;
  bytes: number;
}

/** A container a request's tool runs in: its id known now, the container got at first use. */
export interface ContainerLease {
  readonly id: string;
  get(): Promise<ContainersTable>;
}

/** Runs a program in a container and keeps what it wrote. */
export interface ContainerRunner {
  run(row: ContainersTable, options: Omit<RunOptions, 'skills'>): Promise<{ result: RunResult; written: WrittenFile[] }>;
}

export interface ContainerToolLog {
  warn(obj: object, msg: string): void;
}

export const head = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n)}\n[... ${s.length - n} more characters]`);
export const tail = (s: string, n: number) => (s.length <= n ? s : `[... ${s.length - n} characters before]\n${s.slice(-n)}`);

/** A program's exit code; one killed by a signal exits 128 + its number, as bash reports it. */
export function exitCodeOf(r: RunResult): number {
  if (r.exitCode !== null) return r.exitCode;
  const n = r.signal ? constants.signals[r.signal as keyof typeof constants.signals] : undefined;
  return 128 + (n ?? 9);
}
