// Is the upstream answering? `GET {base}/models` with the configured key and headers,
// through the provider's own connection pool: every OpenAI-compatible server has it,
// it costs the upstream nothing, and a wrong key shows up as a 401.
import type { Dispatcher } from 'undici';
import { outsideText } from '../../../secrets.ts';
import type { UpstreamTarget } from './transport.ts';

/** Resolves when the upstream answers 2xx; rejects with a short reason (never a header or body) otherwise. */
export async function probeUpstream(target: UpstreamTarget, dispatcher: Dispatcher, timeoutMs: number): Promise<void> {
  const { 'content-type': _json, ...headers } = target.headers;
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Dispatcher.ResponseData;
  try {
    res = await dispatcher.request({ origin: target.origin, path: `${target.basePath}/models`, method: 'GET', headers: { ...headers, accept: 'application/json' }, signal });
  } catch (err) {
    if (signal.aborted) throw new Error(`no answer within ${timeoutMs} ms`);
    const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    throw new Error(`connection failed: ${outsideText(cause, target.scrubber)}`);
  }
  // The body is not needed: read it off (small) so the connection can be reused.
  await res.body.dump().catch(() => undefined);
  if (res.statusCode < 200 || res.statusCode > 299) throw new Error(`answered ${res.statusCode}`);
}
