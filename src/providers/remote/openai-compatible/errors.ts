// Reading error payloads from the shapes upstreams actually send.
import { ProviderError } from '../../types.ts';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const MAX_MESSAGE = 500;

function clip(s: string): string {
  const t = s.trim();
  return t.length > MAX_MESSAGE ? `${t.slice(0, MAX_MESSAGE)}…` : t;
}

/**
 * The error object inside a payload, if the payload is an error:
 * `{error: {message, code}}` (OpenAI, OpenRouter, newer vLLM), `{error: "text"}`
 * (Ollama, llama.cpp), or a top-level `{object: "error", message, code}` (older vLLM).
 */
export function errorInPayload(payload: unknown): { message: string; code?: unknown } | undefined {
  if (!isRecord(payload)) return undefined;
  const err = payload.error;
  if (typeof err === 'string' && err !== '') return { message: clip(err) };
  if (isRecord(err)) {
    const message = typeof err.message === 'string' && err.message !== '' ? err.message : JSON.stringify(err);
    return { message: clip(message), code: err.code };
  }
  if (payload.object === 'error' && typeof payload.message === 'string') {
    return { message: clip(payload.message), code: payload.code };
  }
  return undefined;
}

/** A readable message from a non-2xx response body (JSON or not). */
export function messageFromErrorBody(text: string): string | undefined {
  try {
    const payload: unknown = JSON.parse(text);
    const found = errorInPayload(payload);
    if (found) return found.message;
    if (isRecord(payload) && typeof payload.detail === 'string') return clip(payload.detail); // FastAPI
    if (isRecord(payload) && typeof payload.message === 'string') return clip(payload.message);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim() === '' ? undefined : clip(text);
}

/** A mid-stream error payload as a ProviderError (a numeric code is taken as the status). */
export function streamError(found: { message: string; code?: unknown }): ProviderError {
  const status = typeof found.code === 'number' && found.code >= 400 && found.code < 600 ? found.code : undefined;
  return new ProviderError(`upstream error mid-stream: ${found.message}`, status, false);
}
