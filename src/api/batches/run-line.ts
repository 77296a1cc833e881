// One batch line through the pipeline a POST takes: the batch's key (as it is now:
// revoked or paused since is refused), the endpoint's contract, the key's limits and
// the account's concurrency slot (waited for, not refused: a batch shares the account
// with live calls), a Run that reserves and settles, and an activity row. The answer is
// the line's response, in the batch output shape.
import { ApiError, serverError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { admitCall } from '../../pipeline/admit.ts';
import { admitKey } from '../../pipeline/authenticate.ts';
import { newCall, type CallLog } from '../../pipeline/call.ts';
import { checkCall } from '../../pipeline/contract.ts';
import { finishCall } from '../../pipeline/finish.ts';
import type { Services } from '../../services.ts';
import type { BatchEndpoint } from './batch-endpoints.ts';

export interface LineOutcome {
  /** batch_req_...: the output line's id. */
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: Record<string, unknown> };
  error: null;
  /** Micro-credits charged for it. */
  credits: number;
  /** The tokens it was charged for (whatever its surface calls them in its body). */
  usage: { inputTokens: number; outputTokens: number };
}

export interface LineInput {
  customId: string;
  body: unknown;
  /** The batch's caller, for key IP allowlists. */
  ip: string;
  log: CallLog;
  /** Aborted when the batch is cancelled or its job interrupted: the run stops and settles for what ran. */
  signal: AbortSignal;
  /** The call's request id, when the caller recorded it before the line ran (default: a new one). */
  requestId?: string;
}

export async function runLine(services: Services, endpoint: BatchEndpoint, key: KeyRecord, line: LineInput): Promise<LineOutcome> {
  const call = newCall({
    id: line.requestId ?? newId('req_'),
    method: 'POST',
    route: { auth: 'key', contract: endpoint.contract, endpoint: endpoint.url },
    routeLabel: `batch ${endpoint.url}`,
    ip: line.ip,
    log: line.log,
  });
  const stop = () => call.abort?.abort(line.signal.reason);
  line.signal.addEventListener('abort', stop, { once: true });
  let status = 200;
  let body: Record<string, unknown>;
  try {
    admitKey(services, call, key);
    checkCall(call, { body: line.body });
    await admitCall(services, call, Date.now(), { waitForSlot: line.signal });
    line.signal.throwIfAborted();
    body = await endpoint.run(call);
  } catch (err) {
    const error = err instanceof ApiError ? err : line.signal.aborted ? serverError('The batch stopped before this request finished.') : undefined;
    if (!error) line.log.error({ err, request_id: call.id }, 'batch line failed');
    const shown = error ?? serverError();
    status = shown.status;
    call.errorCode = shown.code;
    body = shown.toBody();
  } finally {
    line.signal.removeEventListener('abort', stop);
  }
  await finishCall(services, call, status);
  return {
    id: newId('batch_req_'),
    custom_id: line.customId,
    response: { status_code: status, request_id: call.id, body },
    error: null,
    credits: call.creditsSettled,
    usage: { inputTokens: call.usage.inputTokens, outputTokens: call.usage.outputTokens },
  };
}
