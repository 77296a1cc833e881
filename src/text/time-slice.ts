// Long CPU work on the main thread done a slice at a time: `check()` between units of
// work yields to the event loop once the slice has run its time, so other requests keep
// being served, and stops the work when its signal aborts.

/** A slice's time before it yields (ms): well inside the "few milliseconds" a request may hold the loop. */
export const SLICE_MS = 4;

export class TimeSlice {
  private started = performance.now();

  constructor(
    private readonly signal?: AbortSignal,
    private readonly ms = SLICE_MS,
  ) {}

  /** Yields when this slice has run its time (then throws the signal's reason if it aborted). */
  async check(): Promise<void> {
    if (performance.now() - this.started <= this.ms) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.signal?.throwIfAborted();
    this.started = performance.now();
  }
}
