// The vector stores' embedder: the built-in lexical one, or the operator's own model
// through AGENT_API_EMBEDDER_MODULE, a module (a path) whose `createEmbedder()` returns
// an Embedder of 384 dimensions (the index's width) that runs locally, e.g. an ONNX
// sentence model with weights on disk. It is checked once at start-up: a module that
// fails to load or embeds at another width stops start-up with a message.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { INDEX_DIMENSIONS } from '../store/migrations/0016_vector_stores.ts';
import type { Embedder } from './embedder.ts';
import { LexicalEmbedder } from './lexical-embedder.ts';

export async function loadEmbedder(modulePath: string | undefined): Promise<Embedder> {
  if (!modulePath) return new LexicalEmbedder(INDEX_DIMENSIONS);
  const mod = (await import(pathToFileURL(path.resolve(modulePath)).href)) as { createEmbedder?: () => Embedder | Promise<Embedder> };
  if (typeof mod.createEmbedder !== 'function') throw new Error(`AGENT_API_EMBEDDER_MODULE: ${modulePath} has no createEmbedder() export`);
  const embedder = await mod.createEmbedder();
  const [probe] = await embedder.embed(['probe']);
  if (embedder.dimensions !== INDEX_DIMENSIONS || probe?.length !== INDEX_DIMENSIONS) {
    throw new Error(`AGENT_API_EMBEDDER_MODULE: the embedder must give ${INDEX_DIMENSIONS}-dimension vectors (it gives ${probe?.length ?? 'none'})`);
  }
  return embedder;
}
