// One batch line through the call runner (pipeline/runner.ts), the steps a POST takes:
// the batch's key (as it is now: revoked or paused since is refused), the key's limits
// and the account's concurrency slot (waited for, not refused: a batch shares the
// account with live calls), the endpoint's contract, a Run that reserves and settles,
// and an activity row. The answer is the line's response, in the batch output shape.
import { referenceErrors } from '../../contract/roots.ts';
import { serverError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { CallLog } from '../../pipeline/call.ts';
import { runCall } from '../../pipeline/runner.ts';
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
  const errors = endpoint.root?.errors ?? referenceErrors;
  const { call, status, value, error } = await runCall(
    services,
    {
      id: line.requestId,
      route: { auth: 'key', contract: endpoint.contract, endpoint: endpoint.url, ...(endpoint.root ? { root: endpoint.root } : {}) },
      routeLabel: `batch ${endpoint.url}`,
      ip: line.ip,
      log: line.log,
      key,
      body: () => line.body,
      signal: line.signal,
      waitForSlot: true,
      stopped: () => serverError('The batch stopped before this request finished.'),
    },
    (c) => endpoint.run(c),
  );
  return {
    id: newId('batch_req_'),
    custom_id: line.customId,
    // A failed line's body (and status) in its root's error shape, as a POST there answers.
    response: error
      ? { status_code: errors.status(error), request_id: call.id, body: errors.body(error, call.id) as Record<string, unknown> }
      : { status_code: status, request_id: call.id, body: value! },
    error: null,
    credits: call.creditsSettled,
    usage: { inputTokens: call.usage.inputTokens, outputTokens: call.usage.outputTokens },
  };
}
