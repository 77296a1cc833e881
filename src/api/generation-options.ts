// The one mapping from a checked request body to the provider's generation options,
// for every field chat and text completions share (sampling, stop, response format,
// reasoning, output cap). Each surface adds its own input (messages and tools, or a
// prompt); an applied field reaches the provider through here or not at all
// (api/chat/applied-fields.test.ts proves every one does).
import type { ChatModel } from '../contract/models.ts';
import type { CompletionRequest, ResponseFormat } from '../providers/types.ts';

/** The shared fields, as the contract left them (nulls mean "not set"). */
export interface GenerationBody {
  /** Required by every contract that uses this mapping. */
  model?: string;
  stream?: boolean | null;
  response_format?: unknown;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  min_p?: number | null;
  top_a?: number | null;
  repetition_penalty?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  seed?: number | null;
  stop?: string | string[] | null;
  reasoning_effort?: string | null;
  reasoning?: { effort?: string | null } | null;
  verbosity?: string | null;
  user?: string | null;
}

export type GenerationOptions = Omit<CompletionRequest, 'prompt'>;

export function mapResponseFormat(rf: unknown): ResponseFormat | undefined {
  if (!rf || typeof rf !== 'object') return undefined;
  const format = rf as { type: string; json_schema?: { name: string; schema?: Record<string, unknown>; strict?: boolean | null } };
  if (format.type === 'json_schema' && format.json_schema) {
    const { name, schema, strict } = format.json_schema;
    return { type: 'json_schema', name, schema: schema ?? {}, ...(typeof strict === 'boolean' ? { strict } : {}) };
  }
  return { type: format.type } as ResponseFormat;
}

/** `o` without its undefined and null members (a loop: this runs on every request). */
export function defined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const k in o) if (o[k] !== undefined && o[k] !== null) out[k] = o[k];
  return out as T;
}

/**
 * `own`: the surface's own fields (messages and tools, or a prompt), mapped in the same
 * pass. Not `{ ...generationOptions(), own }` at the call site: on Node 20's V8 every
 * property added after a spread takes a slow path that costs microseconds per request.
 */
export function generationOptions<Own extends object = object>(body: GenerationBody, maxTokens: number, own?: Own): GenerationOptions & Own {
  const fields = {
    model: body.model as ChatModel,
    stream: body.stream === true,
    responseFormat: mapResponseFormat(body.response_format),
    maxTokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    minP: body.min_p,
    topA: body.top_a,
    repetitionPenalty: body.repetition_penalty,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    logitBias: body.logit_bias,
    seed: body.seed,
    stop: typeof body.stop === 'string' ? [body.stop] : body.stop,
    reasoningEffort: (body.reasoning_effort ?? body.reasoning?.effort) as GenerationOptions['reasoningEffort'],
    verbosity: body.verbosity as GenerationOptions['verbosity'],
    user: body.user,
  };
  if (own) Object.assign(fields, own);
  return defined(fields) as GenerationOptions & Own;
}
