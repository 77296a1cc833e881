// A periodic background job (e.g. deleting expired stored completions). The timer is
// unref'd so it never keeps the process alive, runs never overlap (a slow run makes
// the next tick skip), and a failing run is logged and retried at the next tick.

export interface SweeperLog {
  error(obj: unknown, msg?: string): void;
  debug?(obj: unknown, msg?: string): void;
}

export interface SweeperOptions {
  intervalMs: number;
  /** One run; its result (e.g. rows deleted) is logged at debug. */
  run: () => Promise<unknown>;
  log: SweeperLog;
  /** Names the job in log lines. */
  name?: string;
}

export interface Sweeper {
  /** Stops the timer; resolves when a run in progress has finished. */
  stop(): Promise<void>;
  /** Runs now unless a run is in progress (tests, start-up). */
  runNow(): Promise<void>;
}

export function startSweeper({ intervalMs, run, log, name = 'sweep' }: SweeperOptions): Sweeper {
  let running: Promise<void> | undefined;
  let stopped = false;

  const tick = (): Promise<void> => {
    if (stopped || running) return running ?? Promise.resolve();
    running = (async () => {
      try {
        const result = await run();
        log.debug?.({ job: name, result }, `${name} done`);
      } catch (err) {
        log.error({ err, job: name }, `${name} failed`);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
    runNow: tick,
  };
}
