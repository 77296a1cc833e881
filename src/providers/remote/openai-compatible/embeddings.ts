// Embeddings through the upstream's POST {base}/embeddings, on the provider's own
// connection pool, retries and timeouts (transport.ts). A request is sent in slices:
// OpenAI takes at most 300,000 tokens a request (a slice's UTF-8 bytes bound its
// tokens), and a slice's answer stays small enough to parse in a few milliseconds.
// Vectors are asked for as base64 (a quarter of the JSON, parsed as strings); an
// upstream that sends floats anyway is read too. A vector longer than the `dimensions`
// asked for (an upstream that ignores it) is shortened here.
import { shorten } from '../../../retrieval/embedder.ts';
import { SecretScrubber } from '../../../secrets.ts';
import { ProviderError, type EmbeddingRequest, type EmbeddingResult } from '../../types.ts';
import { answerError, errorInPayload, isRecord } from './errors.ts';
import { inParallel, upstreamJson, type UpstreamJsonDeps } from './json-call.ts';

/** Bytes of input text in one upstream request (OpenAI: 300,000 tokens; a token is at least a byte). */
const SLICE_BYTES = 256 * 1024;
/** Vector values in one upstream answer: 85 vectors of 3,072, about 1.4 MB of base64. */
const SLICE_VALUES = 256 * 1024;
/** Upstream requests of one call in flight at once. */
const PARALLEL = 4;
/** An answer's size beyond what its vectors need (floats as JSON text: up to ~25 bytes a value). */
const ANSWER_SLACK = 1024 * 1024;

export interface Slice {
  start: number;
  input: string[];
}

/** The input cut into slices that each fit one upstream request (never an empty one). */
export function slices(input: readonly string[], valuesPerVector: number): Slice[] {
  const maxInputs = Math.max(1, Math.floor(SLICE_VALUES / valuesPerVector));
  const out: Slice[] = [];
  let current: Slice = { start: 0, input: [] };
  let bytes = 0;
  for (let i = 0; i < input.length; i++) {
    const size = Buffer.byteLength(input[i]!);
    if (current.input.length > 0 && (current.input.length >= maxInputs || bytes + size > SLICE_BYTES)) {
      out.push(current);
      current = { start: i, input: [] };
      bytes = 0;
    }
    current.input.push(input[i]!);
    bytes += size;
  }
  if (current.input.length > 0) out.push(current);
  return out;
}

const invalid = (what: string) => new ProviderError(`upstream sent an invalid embeddings answer: ${what}`, undefined, false);

/** Little-endian float32 values from base64, on any host. */
export function float32FromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.byteLength % 4 !== 0) throw invalid('a base64 vector whose length is not a whole number of float32 values');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

function vectorOf(embedding: unknown): Float32Array {
  let v: Float32Array;
  if (typeof embedding === 'string') v = float32FromBase64(embedding);
  else if (Array.isArray(embedding) && embedding.every((x) => typeof x === 'number')) v = Float32Array.from(embedding as number[]);
  else throw invalid('an embedding that is neither a list of numbers nor base64');
  for (let i = 0; i < v.length; i++) if (!Number.isFinite(v[i])) throw invalid('a vector value that is not a finite number');
  return v;
}

/** The slice's vectors in input order and its prompt tokens, from the parsed answer. */
export function readAnswer(payload: unknown, count: number, dimensions: number | undefined, scrubber = new SecretScrubber()): { vectors: Float32Array[]; tokens: number | undefined } {
  const error = errorInPayload(payload);
  if (error) throw answerError(error, scrubber, 'in its answer');
  if (!isRecord(payload) || !Array.isArray(payload.data)) throw invalid('no data list');
  if (payload.data.length !== count) throw invalid(`${payload.data.length} vectors for ${count} inputs`);
  const vectors: Float32Array[] = new Array(count);
  for (const [position, item] of payload.data.entries()) {
    if (!isRecord(item)) throw invalid('an item that is not an object');
    // `index` orders them (OpenAI sends them in order; not every server says so).
    const index = item.index === undefined ? position : item.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || vectors[index]) throw invalid('a missing, repeated or out-of-range index');
    let v = vectorOf(item.embedding);
    if (dimensions !== undefined && v.length !== dimensions) {
      if (v.length < dimensions) throw invalid(`a vector of ${v.length} values where ${dimensions} were asked for`);
      v = shorten(v, dimensions);
    }
    vectors[index] = v;
  }
  const usage = isRecord(payload.usage) ? payload.usage.prompt_tokens : undefined;
  return { vectors, tokens: typeof usage === 'number' && Number.isFinite(usage) && usage >= 0 ? usage : undefined };
}

export type UpstreamEmbeddingsDeps = UpstreamJsonDeps;

/** The size of the vectors the upstream should send, when known (for slicing and the answer cap). */
const OWN_SIZES: Record<string, number> = { 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072, 'text-embedding-ada-002': 1536 };

export function upstreamEmbed(deps: UpstreamEmbeddingsDeps, request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult> {
  const size = request.dimensions ?? OWN_SIZES[request.model] ?? 3072;
  const parts = slices(request.input, size);

  async function one(slice: Slice, signal: AbortSignal): Promise<{ vectors: Float32Array[]; tokens: number | undefined }> {
    const body = {
      model: request.model,
      input: slice.input,
      encoding_format: 'base64',
      ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
      ...(request.user !== undefined ? { user: request.user } : {}),
    };
    const maxBytes = slice.input.length * size * 32 + ANSWER_SLACK;
    const payload = await upstreamJson(deps, { path: '/embeddings', body, model: request.model, operation: 'embeddings', requestId: request.requestId, maxBytes, what: 'embeddings' }, signal);
    return readAnswer(payload, slice.input.length, request.dimensions, deps.target.scrubber);
  }

  return (async () => {
    const vectors: Float32Array[] = new Array(request.input.length);
    let tokens: number | undefined = 0;
    await inParallel(parts.length, PARALLEL, signal, async (i, signal) => {
      const slice = parts[i]!;
      const got = await one(slice, signal);
      got.vectors.forEach((v, j) => (vectors[slice.start + j] = v));
      tokens = tokens === undefined || got.tokens === undefined ? undefined : tokens + got.tokens;
    });
    return tokens === undefined ? { vectors } : { vectors, inputTokens: tokens };
  })();
}
