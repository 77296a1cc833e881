// How long this thread's event loop is held, in CPU time: a ticker every `everyMs` reads
// the thread's time on a CPU (Linux: /proc/thread-self/schedstat, in ns) and records how
// much of it was spent since the previous tick, i.e. the work done between two turns.
// Unlike the wall-clock delay of a timer (perf_hooks' monitorEventLoopDelay), it does
// not count the time the thread waited for a CPU, so a loaded machine does not inflate
// it: it says what the server did, not how busy the machine was.
import fs from 'node:fs';

const SCHEDSTAT = '/proc/thread-self/schedstat';

export interface LoopCpu {
  /** The ms of CPU time spent between consecutive ticks, and how long the thread waited for a CPU meanwhile. */
  stop(): { gaps: number[]; waitedMs: number };
}

export const loopCpuAvailable = (() => {
  try {
    return Number.isFinite(Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]));
  } catch {
    return false;
  }
})();

/** [ms on a CPU, ms waiting for one] of this thread so far. */
function schedstat(): [number, number] {
  const [onCpu, waiting] = fs.readFileSync(SCHEDSTAT, 'utf8').split(' ');
  return [Number(onCpu) / 1e6, Number(waiting) / 1e6];
}

export function monitorLoopCpu(everyMs = 5): LoopCpu {
  const gaps: number[] = [];
  const [, waitedBefore] = schedstat();
  let last = schedstat()[0];
  const timer = setInterval(() => {
    const now = schedstat()[0];
    gaps.push(now - last);
    last = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { gaps, waitedMs: schedstat()[1] - waitedBefore };
    },
  };
}
