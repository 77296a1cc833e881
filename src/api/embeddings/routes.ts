// POST /embeddings: the call (embeddings-call.ts) checks, holds credits, embeds and
// settles; the answer is written here. A small one (a few vectors) is one JSON body; a
// large one (up to 2,048 vectors of 3,072 values, over 100 MB of JSON) is streamed as
// it is written, in chunks with turns of the event loop between them (api/json-text.ts).
import { Readable } from 'node:stream';
import { createEmbedding } from '../../contract/endpoints/embeddings.ts';
import type { Router } from '../../http/router.ts';
import { jsonChunks } from '../json-text.ts';
import { createEmbeddings, embeddingsObject, valueCount } from './embeddings-call.ts';

/** Up to this many vector values the answer is stringified at once (about 2 ms: floats as text are slow to write, base64 is fast). */
const WHOLE_VALUES = { float: 16 * 1024, base64: 256 * 1024 };

export function embeddingsRoutes(router: Router): void {
  const services = router.services;

  router.endpoint(createEmbedding, async ({ body, key, request, reply }) => {
    const embedded = await createEmbeddings(services, request.state, body, key);
    if (!embedded) return reply;
    const answer = embeddingsObject(embedded);
    if (valueCount(embedded) <= WHOLE_VALUES[embedded.encoding]) return answer;
    return reply.type('application/json; charset=utf-8').send(Readable.from(jsonChunks(answer)));
  });
}
