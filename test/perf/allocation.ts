// What a piece of per-request code allocates, measured with V8's sampling heap profiler
// (objects already collected included). Garbage is what a request path costs beyond its
// own work (a scavenge per so many megabytes), and unlike time it is the same on a
// loaded machine, so a test can hold code to a budget without timing anything.
import { Session } from 'node:inspector/promises';

/** Mean bytes allocated per call of `fn`, over `calls` calls after as many warm-up calls. */
export async function bytesPerCall(fn: () => unknown, calls = 5_000): Promise<number> {
  for (let i = 0; i < calls; i++) fn();
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    // Every allocation, not only what survives (the two flags are newer than @types/node's table).
    const sampling = { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
    await session.post('HeapProfiler.startSampling', sampling);
    for (let i = 0; i < calls; i++) fn();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    let total = 0;
    const walk = (node: { selfSize: number; children: unknown[] }): void => {
      total += node.selfSize;
      for (const child of node.children) walk(child as typeof node);
    };
    walk(profile.head);
    return total / calls;
  } finally {
    await session.post('HeapProfiler.disable').catch(() => undefined);
    session.disconnect();
  }
}
