// One embeddings request, whoever asked for it: an HTTP request or a batch line. What
// the contract cannot check is checked here, before any credit is held: `dimensions`
// against the model (text-embedding-ada-002 takes none; no model lengthens its vectors)
// and each input's 8,192 tokens (strings are counted with the service's tokenizer, o200k;
// token arrays are o200k ids, decoded to their text). Then a Run holds the input's
// price, the provider embeds (the upstream's /embeddings, or the built-in embedder),
// and the Run settles to the input tokens: the provider's count, else ours.
import os from 'node:os';
import { fromMicro } from '../../accounts/money.ts';
import { createEmbedding, MAX_INPUT_TOKENS } from '../../contract/endpoints/embeddings.ts';
import { EMBEDDING_MODEL_SPECS, type EmbeddingModel } from '../../contract/models.ts';
import type { BodyOf } from '../../contract/types.ts';
import { Run } from '../../credits/run.ts';
import { invalidRequest, serverError } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { callSignal, type Call } from '../../pipeline/call.ts';
import type { Services } from '../../services.ts';
import { decodeTokens, TokenCounter, UnknownTokenError } from '../../text/tokenizer.ts';
import type { BatchEndpoint } from '../batches/batch-endpoints.ts';
import { asJsonList } from '../json-text.ts';
import { consume } from '../stream-answer.ts';

export type EmbeddingsBody = BodyOf<typeof createEmbedding>;

/** Work between two turns of the event loop while decoding token arrays (ms). */
const SLICE_MS = 4;

export interface Embedded {
  /** The model as the request named it (an alias answers as itself). */
  model: string;
  vectors: Float32Array[];
  encoding: 'float' | 'base64';
  usage: { prompt_tokens: number; total_tokens: number };
  /** Credits charged. */
  svc: number;
}

interface Inputs {
  texts: string[];
  /** o200k tokens, all inputs together. */
  tokens: number;
  /** A bound of another tokenizer's count: a byte-level BPE's token is at least a byte, plus markers some models add to each input ([CLS], [SEP]). */
  bound: number;
}

/** Tokens a model may add to each input (BERT-style embedding models add two). */
const MARKERS = 8;

/** The request's inputs as texts, counted; 400 naming `input` for one over the limit or an unknown token id. */
async function readInputs(input: EmbeddingsBody['input'], signal: AbortSignal): Promise<Inputs> {
  const single = typeof input === 'string' || typeof input![0] === 'number';
  const list = single ? [input as string | number[]] : (input as (string | number[])[]);
  const where = (i: number) => (single ? 'input' : `input[${i}]`);
  const counter = new TokenCounter();
  const texts: string[] = [];
  let tokens = 0;
  let bound = 0;
  let sliceStart = performance.now();
  for (const [i, item] of list.entries()) {
    let text: string;
    let count: number;
    if (typeof item === 'string') {
      text = item;
      count = await counter.add(item, MAX_INPUT_TOKENS);
      if (count > MAX_INPUT_TOKENS) {
        throw invalidRequest(`Invalid '${where(i)}': an input may hold at most ${MAX_INPUT_TOKENS} tokens, and this one holds more. Shorten it or split it into several inputs.`, 'input');
      }
    } else {
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        signal.throwIfAborted();
        sliceStart = performance.now();
      }
      try {
        text = decodeTokens(item);
      } catch (err) {
        if (!(err instanceof UnknownTokenError)) throw err;
        throw invalidRequest(`Invalid '${where(i)}': ${err.token} is not a token id of this service's tokenizer (o200k_base).`, 'input');
      }
      count = item.length;
    }
    texts.push(text);
    tokens += count;
    bound += Math.max(count, Buffer.byteLength(text)) + MARKERS;
  }
  signal.throwIfAborted();
  return { texts, tokens, bound };
}

/** Embeds the checked body: null when the caller went away before the end. */
export async function createEmbeddings(services: Services, call: Call, body: EmbeddingsBody, key: KeyRecord): Promise<Embedded | null> {
  const model = body.model as EmbeddingModel;
  const spec = EMBEDDING_MODEL_SPECS[model];
  const dimensions = body.dimensions;
  if (dimensions !== undefined) {
    if (!spec.shortens) throw invalidRequest('This model does not support specifying dimensions.', 'dimensions');
    if (dimensions > spec.dimensions) {
      throw invalidRequest(`Invalid value for 'dimensions': ${model} makes vectors of ${spec.dimensions} values, so dimensions is at most ${spec.dimensions}.`, 'dimensions');
    }
  }
  const inputs = await readInputs(body.input, callSignal(call));
  const provider = services.engines.for('embeddings', model);
  const run = await Run.open(services, call, {
    key,
    price: services.engines.price('embeddings', model),
    input: { bound: provider.reportsUsage ? inputs.bound : inputs.tokens, counted: async () => inputs.tokens },
    maxOutputTokens: 0,
  });
  const ran = await consume(run, run.signal, async () => {
    const result = await provider.embed(
      {
        model: spec.runs,
        input: inputs.texts,
        ...(dimensions !== undefined ? { dimensions } : {}),
        ...(body.user !== undefined ? { user: body.user } : {}),
        requestId: call.id,
      },
      run.signal,
    );
    if (result.vectors.length !== inputs.texts.length) throw new Error(`the embeddings provider returned ${result.vectors.length} vectors for ${inputs.texts.length} inputs`);
    run.report({ inputTokens: result.inputTokens ?? inputs.tokens, outputTokens: 0 });
    return result.vectors;
  });
  if (!ran) return null;
  const tokens = ran.usage.inputTokens;
  return { model: body.model!, vectors: ran.value, encoding: body.encoding_format ?? 'float', usage: { prompt_tokens: tokens, total_tokens: tokens }, svc: fromMicro(ran.credits) };
}

const littleEndian = os.endianness() === 'LE';

/** A vector as base64 of its little-endian float32 bytes (the reference's encoding_format base64). */
export function base64Of(vector: Float32Array): string {
  if (littleEndian) return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

/**
 * The response object. The vectors stay typed arrays, written by the chunked JSON writer
 * (api/json-text.ts); base64 text is made as the writer reaches each item (toJSON), so
 * building the object costs nothing, and JSON.stringify still writes it correctly.
 */
export function embeddingsObject(e: Embedded): Record<string, unknown> {
  return {
    object: 'list',
    data: e.vectors.map((v, index) => ({ object: 'embedding', index, embedding: e.encoding === 'base64' ? { toJSON: () => base64Of(v) } : asJsonList(v) })),
    model: e.model,
    usage: e.usage,
    svc: e.svc,
  };
}

/** How many vector values the answer holds (the route picks how to write it). */
export function valueCount(e: Embedded): number {
  return e.vectors.reduce((n, v) => n + v.length, 0);
}

/** Embeddings as a batch line answers them (api/batches/batch-endpoints.ts). */
export function embeddingsBatchEndpoint(services: Services): BatchEndpoint {
  return {
    url: '/v1/embeddings',
    contract: createEmbedding,
    async run(call) {
      const embedded = await createEmbeddings(services, call, call.body as EmbeddingsBody, call.key!);
      if (!embedded) throw serverError('The batch stopped before this request finished.');
      return embeddingsObject(embedded);
    },
  };
}
