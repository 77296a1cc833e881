// Embeddings without an upstream: the built-in lexical embedder (src/retrieval) at the
// model's own vector size (1536 or 3072), deterministic, no weights; `dimensions`
// keeps the first values and normalizes them again, as text-embedding-3 does. Nested,
// so every prefix carries the whole text (a plain hashed vector's first values hold only
// the few features hashed there, and a short prefix could be all zeros).
import { EMBEDDING_MODEL_SPECS, type EmbeddingModelSpec } from '../../contract/models.ts';
import { shorten } from '../../retrieval/embedder.ts';
import { LexicalEmbedder } from '../../retrieval/lexical-embedder.ts';
import type { EmbeddingProvider, EmbeddingRequest, EmbeddingResult } from '../types.ts';

/** Work between two turns of the event loop while shortening (ms). */
const SLICE_MS = 4;

export function createLexicalEmbeddings(): EmbeddingProvider {
  const bySize = new Map<number, LexicalEmbedder>();
  const embedder = (size: number) => {
    let e = bySize.get(size);
    if (!e) bySize.set(size, (e = new LexicalEmbedder(size, { nested: true })));
    return e;
  };
  const specs = new Map<string, EmbeddingModelSpec>(Object.values(EMBEDDING_MODEL_SPECS).map((s) => [s.runs, s]));

  return {
    name: 'lexical',
    reportsUsage: false,
    async embed(request: EmbeddingRequest, signal: AbortSignal): Promise<EmbeddingResult> {
      signal.throwIfAborted();
      const spec = specs.get(request.model);
      if (!spec) throw new Error(`no embedding model named ${request.model}`);
      const vectors = await embedder(spec.dimensions).embed(request.input, signal);
      const want = request.dimensions;
      if (want !== undefined && want < spec.dimensions) {
        let sliceStart = performance.now();
        for (let i = 0; i < vectors.length; i++) {
          if (performance.now() - sliceStart > SLICE_MS) {
            await new Promise((resolve) => setImmediate(resolve));
            signal.throwIfAborted();
            sliceStart = performance.now();
          }
          vectors[i] = shorten(vectors[i]!, want);
        }
      }
      signal.throwIfAborted();
      // No inputTokens: the caller counts them with the service's tokenizer.
      return { vectors };
    },
  };
}
