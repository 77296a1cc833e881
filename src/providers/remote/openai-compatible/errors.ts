// Upstream failures in our words. The error payloads upstreams actually send are read for
// their facts: the status, the error type and code when they are short identifiers, the
// message bounded, cleaned of control characters and scrubbed of configured secrets. An
// upstream's body is never passed on as it is: some echo our request, key included.
import { STATUS_CODES } from 'node:http';
import { outsideText, type SecretScrubber } from '../../../secrets.ts';
import { ProviderError, type UpstreamErrorDetail } from '../../types.ts';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An error as the upstream sent it: nothing in it is fit to pass on yet. */
export interface RawUpstreamError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
}

/**
 * The error object inside a payload, if the payload is an error:
 * `{error: {message, type, code}}` (OpenAI, OpenRouter, newer vLLM), `{error: "text"}`
 * (Ollama, llama.cpp), or a top-level `{object: "error", message, type, code}` (older vLLM).
 */
export function errorInPayload(payload: unknown): RawUpstreamError | undefined {
  if (!isRecord(payload)) return undefined;
  const err = payload.error;
  if (typeof err === 'string' && err !== '') return { message: err };
  if (isRecord(err)) return { message: err.message, type: err.type, code: err.code };
  if (payload.object === 'error' && typeof payload.message === 'string') return { message: payload.message, type: payload.type, code: payload.code };
  return undefined;
}

/** The error in a non-2xx answer's body; JSON only: a text or HTML body is never quoted. */
function errorInBody(text: string): RawUpstreamError | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return undefined;
  }
  const found = errorInPayload(payload);
  if (found) return found;
  if (!isRecord(payload)) return undefined;
  if (typeof payload.detail === 'string') return { message: payload.detail }; // FastAPI (a list there is a validation dump: not quoted)
  if (typeof payload.message === 'string') return { message: payload.message, type: payload.type, code: payload.code };
  return undefined;
}

// A type or code worth naming: a short identifier, not prose (and never a secret).
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * What of `raw` may be passed on. A numeric code is the status when it looks like one
 * (OpenRouter's `code: 502`, vLLM's `code: 400`) and is then not repeated as a code.
 */
export function upstreamDetail(raw: RawUpstreamError | undefined, scrubber: SecretScrubber, status?: number): { status?: number; detail: UpstreamErrorDetail } {
  const detail: UpstreamErrorDetail = {};
  if (!raw) return { ...(status !== undefined ? { status } : {}), detail };
  if (status === undefined && typeof raw.code === 'number' && Number.isInteger(raw.code) && raw.code >= 400 && raw.code < 600) status = raw.code;
  const id = (v: unknown): string | undefined => {
    const s = typeof v === 'number' && Number.isInteger(v) && v !== status ? String(v) : v;
    return typeof s === 'string' && IDENTIFIER.test(s) && scrubber.scrub(s) === s ? s : undefined;
  };
  const type = id(raw.type);
  const code = id(raw.code);
  if (type !== undefined) detail.type = type;
  if (code !== undefined) detail.code = code;
  if (typeof raw.message === 'string') {
    const message = outsideText(raw.message, scrubber);
    if (message !== '') detail.message = message;
  }
  return { ...(status !== undefined ? { status } : {}), detail };
}

/** " (invalid_request_error: context_length_exceeded)", " (502)", or nothing. */
function named(detail: UpstreamErrorDetail, status?: number): string {
  const ids = [detail.type, detail.code].filter((s) => s !== undefined).join(': ');
  const all = [status, ids].filter((s) => s !== undefined && s !== '').join(', ');
  return all === '' ? '' : ` (${all})`;
}

/** The facts of a non-2xx answer (its body is read for them, never quoted). */
export function statusFailure(status: number, body: string, scrubber: SecretScrubber): { message: string; detail: UpstreamErrorDetail } {
  const { detail } = upstreamDetail(errorInBody(body), scrubber, status);
  const said = detail.message ?? STATUS_CODES[status];
  return { message: `the upstream model server answered ${status}${named(detail)}${said ? `: ${said}` : ''}`, detail };
}

/**
 * An error payload inside a 2xx answer: `mid-stream` in a stream (`{"error": ...}` as a
 * chunk, an `event: error`), `in its answer` in a whole JSON answer.
 */
export function answerError(raw: RawUpstreamError, scrubber: SecretScrubber, where: 'mid-stream' | 'in its answer' = 'mid-stream'): ProviderError {
  const { status, detail } = upstreamDetail(raw, scrubber);
  const message = `the upstream model server reported an error ${where}${named(detail, status)}${detail.message ? `: ${detail.message}` : ''}`;
  return new ProviderError(message, status, false, detail);
}
