// The invariants of every answer: no 5xx; a 4xx in its root's error shape with
// X-Request-Id (/v1, /admin/v1 and the gateway: {error: {message, type, param, code}};
// the messages root: the vendor's {type: "error", error: {type, message}, request_id},
// its type as the status says, request_id and a `request-id` header equal to
// X-Request-Id on every answer; on the gateway's forwarded operations the upstream's
// own refusal {error: {code, message, metadata}} too, passed through, and X-Request-Id
// on every answer); and the case's own expectations (refused, status, code, the field at
// fault: in `param`, or on the messages root, whose shape has none, named in the message).
import { GATEWAY, MESSAGES } from '../../src/contract/roots.ts';
import type { Case } from './case.ts';
import type { RawResult } from './raw-http.ts';

export type ViolationKind =
  | '5xx'
  | 'shape'
  | 'no-request-id'
  | 'no-answer'
  | 'timeout'
  | 'accepted'
  | 'status'
  | 'code'
  | 'param'
  /** a Responses WebSocket that did not answer another message after this one */
  | 'unusable';

export interface Violation {
  kind: ViolationKind;
  detail: string;
}

export interface Outcome {
  /** HTTP status, or 'closed' / 'timeout' */
  label: string;
  status: number | null;
  requestId: string | null;
  /** error.param / error.code of a 4xx in shape (on the messages root: no param, and error.type as the code) */
  param: string | null | undefined;
  code: string | undefined;
  /** the root whose shape the answer must take: the one the request's path is under */
  shape: 'reference' | 'messages';
  /** a refusal of the gateway's upstream, passed through (its shape, not ours): it may have held credits, never charged them */
  upstream?: true;
  /** the first bytes of the answer, for reproductions */
  preview: string;
  /** a close without an answer that the case tolerates (HTTP-level garbage) */
  parserClose: boolean;
  violations: Violation[];
  /** ids named by a 2xx answer (rows it may have written) */
  ids: string[];
}

interface ErrorBody {
  error: { message: unknown; type: unknown; param: unknown; code: unknown };
}

function errorShape(body: Buffer): { ok: true; value: ErrorBody } | { ok: false; why: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, why: 'body is not JSON' };
  }
  const e = (parsed as Partial<ErrorBody> | null)?.error;
  if (typeof e !== 'object' || e === null) return { ok: false, why: 'no error object' };
  if (typeof e.message !== 'string') return { ok: false, why: 'error.message is not a string' };
  if (typeof e.type !== 'string') return { ok: false, why: 'error.type is not a string' };
  if (!(typeof e.param === 'string' || e.param === null)) return { ok: false, why: 'error.param is not a string or null' };
  if (typeof e.code !== 'string') return { ok: false, why: 'error.code is not a string' };
  return { ok: true, value: parsed as ErrorBody };
}

const namesField = (param: string | null | undefined, field: string, exact: boolean) =>
  typeof param === 'string' && (param === field || (!exact && (param.startsWith(`${field}.`) || param.startsWith(`${field}[`))));

/** The vendor's error type for each status it answers with (other 4xx: invalid_request_error). */
export const MESSAGES_ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
};

interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string;
}

function messagesShape(body: Buffer, status: number, requestId: string | null): { ok: true; value: MessagesErrorBody } | { ok: false; why: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, why: 'body is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, why: 'body is not an object' };
  const p = parsed as Record<string, unknown>;
  if (p.type !== 'error') return { ok: false, why: `type is ${JSON.stringify(p.type)}, not "error"` };
  const extra = Object.keys(p).filter((k) => !['type', 'error', 'request_id'].includes(k));
  if (extra.length) return { ok: false, why: `fields outside the vendor shape: ${extra.join(', ')}` };
  const e = p.error as Record<string, unknown> | null | undefined;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return { ok: false, why: 'no error object' };
  const extraE = Object.keys(e).filter((k) => !['type', 'message'].includes(k));
  if (extraE.length) return { ok: false, why: `error fields outside the vendor shape: ${extraE.join(', ')}` };
  if (typeof e.message !== 'string') return { ok: false, why: 'error.message is not a string' };
  if (typeof e.type !== 'string') return { ok: false, why: 'error.type is not a string' };
  const want = MESSAGES_ERROR_TYPES[status] ?? 'invalid_request_error';
  if (e.type !== want) return { ok: false, why: `error.type ${JSON.stringify(e.type)} for status ${status} (the vendor's is ${want})` };
  if (typeof p.request_id !== 'string') return { ok: false, why: 'request_id is not a string' };
  if (requestId !== null && p.request_id !== requestId) return { ok: false, why: `request_id ${p.request_id} is not X-Request-Id ${requestId}` };
  return { ok: true, value: parsed as MessagesErrorBody };
}

/**
 * Does an error message name `field` (the messages root's stand-in for `param`)? As a
 * whole name (not inside a longer one); `exact`: at least once not followed by a member
 * (`.x`, `[0]`) of it.
 */
export function messageNames(message: string, field: string, exact: boolean): boolean {
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const at = new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])${exact ? '(?![.[])' : ''}`);
  return at.test(message);
}

/** Is the target's path under `prefix` (an absolute-form target by its path)? */
function under(target: string, prefix: string): boolean {
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  return path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);
}

/** The root the target's path is under. */
const shapeOf = (target: string): 'reference' | 'messages' => (under(target, MESSAGES.prefix) ? 'messages' : 'reference');

/**
 * The upstream aggregator's refusal, which the gateway passes through as it came:
 * `{error: {code, message, metadata?}}` with `code` its status. Ours always carry `type`
 * and `param` (and a string code), so the two cannot be taken for each other.
 */
function upstreamShape(body: Buffer, status: number): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  const e = (parsed as { error?: Record<string, unknown> } | null)?.error;
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  return e.code === status && typeof e.message === 'string' && !('type' in e) && !('param' in e) && (e.metadata === undefined || (typeof e.metadata === 'object' && !Array.isArray(e.metadata)));
}

const ID_PATTERN = /"id"\s*:\s*"([^"\\]{1,200})"/g;

/** `method` and `target` are the ones sent (a case may send another method or path than its operation's). */
export function judge(c: Case, result: RawResult, method: string, target: string): Outcome {
  let shape = shapeOf(target);
  // Refused by the HTTP parser, the request line may have come in an earlier chunk than
  // the fault (a URL over the header limit): no root is known then, and the compatible
  // API's shape is the right answer.
  if (shape === 'messages' && c.expect.parserLevel && result.kind === 'response' && errorShape(result.response.body).ok) shape = 'reference';
  const out: Outcome = { label: '', status: null, requestId: null, param: undefined, code: undefined, shape, preview: '', parserClose: false, violations: [], ids: [] };
  const v = (kind: ViolationKind, detail: string) => out.violations.push({ kind, detail });
  if (result.kind === 'timeout') {
    out.label = 'timeout';
    v('timeout', `no answer within ${Math.round(result.ms)} ms (${result.received} bytes received)`);
    return out;
  }
  if (result.kind === 'closed') {
    out.label = 'closed';
    out.preview = `connection closed without an answer (${result.error ?? 'EOF'}, ${result.received} bytes received)`;
    if (c.expect.parserLevel) out.parserClose = true;
    else v('no-answer', out.preview);
    return out;
  }
  const { status, headers, body } = result.response;
  out.status = status;
  out.label = String(status);
  out.requestId = headers['x-request-id'] ?? null;
  out.preview = `${status} ${body.subarray(0, 400).toString('utf8')}`;
  if (status === 0) {
    v('shape', 'not an HTTP response');
    return out;
  }
  if (status >= 500) v('5xx', `status ${status}`);
  const gateway = under(target, GATEWAY.prefix);
  // The gateway's answers, its forwarded ones (the upstream's status and body) included, all carry our request id.
  if (gateway && status < 400 && !out.requestId) v('no-request-id', 'no X-Request-Id header on a gateway answer');
  // The vendor's SDKs read `request-id`: on every answer of the root, equal to X-Request-Id.
  if (shape === 'messages' && headers['request-id'] !== out.requestId) v('no-request-id', `request-id header ${JSON.stringify(headers['request-id'] ?? null)}, X-Request-Id ${JSON.stringify(out.requestId)}`);
  let message: string | undefined;
  let inShape = false;
  if (status >= 400) {
    // An answer to HEAD has headers only: X-Request-Id is all it can show.
    if (method !== 'HEAD' && shape === 'messages') {
      const checked = messagesShape(body, status, out.requestId);
      if (!checked.ok) v('shape', checked.why);
      else {
        inShape = true;
        out.code = checked.value.error.type;
        message = checked.value.error.message;
      }
    } else if (method !== 'HEAD' && gateway && c.op.passthrough && status < 500 && upstreamShape(body, status)) {
      // The upstream judged the forwarded request: its refusal passes through, our code and param are not in it.
      inShape = true;
      out.upstream = true;
      out.code = `(the upstream's ${status})`;
    } else if (method !== 'HEAD') {
      const checked = errorShape(body);
      if (!checked.ok) v('shape', checked.why);
      else {
        inShape = true;
        out.param = checked.value.error.param as string | null;
        out.code = checked.value.error.code as string;
      }
    }
    if (!out.requestId) v('no-request-id', 'no X-Request-Id header');
  }
  if (status >= 200 && status < 300) {
    for (const m of body.subarray(0, 4_000_000).toString('utf8').matchAll(ID_PATTERN)) out.ids.push(m[1]!);
  }
  const e = c.expect;
  if ((e.refuse || e.status) && status < 400) v('accepted', `expected ${e.status ?? 'a 4xx'}, got ${status}`);
  else if (e.status && status !== e.status && status < 500) v('status', `expected ${e.status}, got ${status}`);
  if (status >= 400 && status < 500 && inShape) {
    if (shape === 'messages') {
      // No `param` and no /v1 code here: the type is checked against the status above, and the field must be named in the message.
      if (e.param && !messageNames(message!, e.param.field, e.param.exact)) {
        v('param', `expected the message to name ${JSON.stringify(e.param.field)}${e.param.exact ? '' : ' (or a member)'}, got ${JSON.stringify(message!.slice(0, 200))}`);
      }
    } else {
      if (e.code && out.code !== e.code) v('code', `expected code ${e.code}, got ${out.code}`);
      if (e.param && !namesField(out.param, e.param.field, e.param.exact)) {
        v('param', `expected param ${e.param.exact ? '' : 'naming '}${JSON.stringify(e.param.field)}, got ${JSON.stringify(out.param)}`);
      }
    }
  }
  return out;
}
