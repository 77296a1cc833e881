// The invariants of every answer: no 5xx; a 4xx in the error shape
// {error: {message, type, param, code}} with X-Request-Id; and the case's own
// expectations (refused, status, code, the field at fault in `param`).
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
  /** error.param / error.code of a 4xx in shape */
  param: string | null | undefined;
  code: string | undefined;
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

const ID_PATTERN = /"id"\s*:\s*"([^"\\]{1,200})"/g;

/** `method` is the one sent (a case may send another than its operation's). */
export function judge(c: Case, result: RawResult, method: string): Outcome {
  const out: Outcome = { label: '', status: null, requestId: null, param: undefined, code: undefined, preview: '', parserClose: false, violations: [], ids: [] };
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
  if (status >= 400) {
    // An answer to HEAD has headers only: X-Request-Id is all it can show.
    if (method !== 'HEAD') {
      const shape = errorShape(body);
      if (!shape.ok) v('shape', shape.why);
      else {
        out.param = shape.value.error.param as string | null;
        out.code = shape.value.error.code as string;
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
  if (status >= 400 && status < 500) {
    if (e.code && out.code !== undefined && out.code !== e.code) v('code', `expected code ${e.code}, got ${out.code}`);
    if (e.param && out.code !== undefined && !namesField(out.param, e.param.field, e.param.exact)) {
      v('param', `expected param ${e.param.exact ? '' : 'naming '}${JSON.stringify(e.param.field)}, got ${JSON.stringify(out.param)}`);
    }
  }
  return out;
}
