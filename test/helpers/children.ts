// Child processes tests start (servers, mostly): the one deadline a start gets, and the
// guarantee that none outlives its test. A helper that gives up kills what it started
// (`reap`), and every tracked child still running when the test process exits is killed
// then, so a failed or timed-out test leaves no server burning CPU.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * How long a server child may take to be ready. A loaded machine (2 cores shared by
 * several test runs) slows a start by tens of seconds; that must slow a test, not fail
 * it. Below the runner's 120 s per test, so the helper, not the runner, gives up and
 * says why.
 */
export const START_DEADLINE_MS = 90_000;

/** Running children, and whether each leads a process group of its own (detached). */
const live = new Map<ChildProcess, boolean>();
let hooked = false;

/** Remembers a child until it exits; the test process kills it on exit if it is still running. */
export function track<T extends ChildProcess>(child: T, group = false): T {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const [c, g] of live) signal(c, g, 'SIGKILL');
    });
  }
  live.set(child, group);
  child.once('exit', () => live.delete(child));
  return child;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Sends a signal to the child, or to its whole group; one already gone is fine. */
export function signal(child: ChildProcess, group: boolean, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (group) process.kill(-child.pid, sig);
    else child.kill(sig);
  } catch {
    // ESRCH: gone already.
  }
}

/** Kills the child (its group too) outright and waits until it is gone. */
export async function reap(child: ChildProcess, group = false): Promise<void> {
  if (child.pid === undefined) return; // never started
  if (exited(child)) {
    if (group) signal(child, true, 'SIGKILL'); // what the leader left in its group
    return;
  }
  const gone = once(child, 'exit');
  signal(child, group, 'SIGKILL');
  await gone;
}
