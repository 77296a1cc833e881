// Retrieval quality of the vector stores' search on a labelled set (60 documents, 60
// paraphrased queries, each answered by one document; labelled-set.test-support.ts),
// through the API with the official openai SDK: recall@5 and recall@1 by file, printed.
//
// The floor: the built-in embedder is lexical (no model weights can ship), so a query
// that shares no word or stem with its document cannot be found; the set's queries are
// paraphrased but keep at least two content words. A plain TF-IDF ranking puts the right
// document first for all 60; the hybrid search must keep recall@5 at 0.9 or above (it
// measured 1.0 when written), so a regression in the embedder, the full-text side or the
// fusion shows here.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { TestServer } from '../../test/helpers/test-server.ts';
import { fileSearchClient, settled, startFileSearchServer } from '../api/vector-stores/ingestion.test-support.ts';
import { LABELLED_DOCS, LABELLED_QUERIES } from './labelled-set.test-support.ts';

const RECALL_AT_5_FLOOR = 0.9;

let server: TestServer;
let client: OpenAI;
before(async () => {
  server = await startFileSearchServer();
  client = await fileSearchClient(server);
});
after(() => server.close());

test(`recall@5 on ${LABELLED_QUERIES.length} paraphrased queries over ${LABELLED_DOCS.length} documents is at least ${RECALL_AT_5_FLOOR}`, async () => {
  const idOf = new Map<string, string>();
  for (const d of LABELLED_DOCS) idOf.set(d.name, (await client.files.create({ file: await toFile(Buffer.from(d.text), d.name), purpose: 'assistants' })).id);
  const store = await client.vectorStores.create({ name: 'labelled', file_ids: [...idOf.values()] });
  assert.equal((await settled(client, store.id)).file_counts.completed, LABELLED_DOCS.length);
  let at1 = 0;
  let at5 = 0;
  const missed: string[] = [];
  for (const q of LABELLED_QUERIES) {
    const results = await client.vectorStores.search(store.id, { query: q.query, max_num_results: 5 });
    const files = results.data.map((r) => r.file_id);
    const want = idOf.get(q.relevant)!;
    if (files[0] === want) at1++;
    if (files.includes(want)) at5++;
    else missed.push(`${q.query} -> ${q.relevant}`);
  }
  const recall5 = at5 / LABELLED_QUERIES.length;
  console.log(`retrieval quality: recall@1 ${(at1 / LABELLED_QUERIES.length).toFixed(3)}, recall@5 ${recall5.toFixed(3)} (${LABELLED_QUERIES.length} queries, ${LABELLED_DOCS.length} documents)`);
  for (const m of missed) console.log(`  missed: ${m}`);
  assert.ok(recall5 >= RECALL_AT_5_FLOOR, `recall@5 ${recall5} is below ${RECALL_AT_5_FLOOR}`);
});
