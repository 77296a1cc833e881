// The account's search index cap (SPEC: 500 MB of passages and vectors; 1 MB here via
// AGENT_API_INDEX_MB_PER_ACCOUNT): a file that would pass it ends `failed` with a clear
// last_error and leaves no passage; an account at the cap is refused new files with a
// 400 naming the field; another account is not affected.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { fileSettled } from './ingestion.test-support.ts';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
before(async () => {
  server = await startTestServer({ AGENT_API_JOBS_POLL_MS: '20', AGENT_API_INDEX_MB_PER_ACCOUNT: '1' });
  client = server.openai((await server.createKey({ permissions: { file_search: true, files: true } })).key);
  other = server.openai((await server.createKey({ permissions: { file_search: true, files: true } })).key);
});
after(() => server.close());

test('past the cap a file fails cleanly; at the cap new files are refused', async () => {
  const big = Array.from({ length: 40_000 }, (_, i) => `Line ${i} of the ledger.`).join('\n');
  const file = await client.files.create({ file: await toFile(Buffer.from(big), 'ledger.txt'), purpose: 'assistants' });
  const vs = await client.vectorStores.create({ file_ids: [file.id] });
  const f = await fileSettled(client, vs.id, file.id);
  assert.equal(f.status, 'failed');
  assert.equal(f.last_error?.code, 'invalid_file');
  assert.match(f.last_error!.message, /search index is full: it holds at most 1 MB/);
  assert.equal(f.usage_bytes, 0);
  const rows = await server.app.services.store.db.selectFrom('vector_store_chunks').select('id').where('vector_store_id', '=', vs.id).execute();
  assert.equal(rows.length, 0, 'a failed file keeps no passage');

  const small = await client.files.create({ file: await toFile(Buffer.from('A short note about herons.'), 'note.txt'), purpose: 'assistants' });
  await client.vectorStores.files.create(vs.id, { file_id: small.id });
  assert.equal((await fileSettled(client, vs.id, small.id)).status, 'completed');
  // Fill the account to the cap: new files are refused before anything is queued.
  await server.app.services.store.db.updateTable('vector_store_files').set({ usage_bytes: 1024 * 1024 }).where('file_id', '=', small.id).execute();
  const third = await client.files.create({ file: await toFile(Buffer.from('Another note.'), 'third.txt'), purpose: 'assistants' });
  await assert.rejects(client.vectorStores.files.create(vs.id, { file_id: third.id }), (e: any) => e.status === 400 && e.param === 'file_id' && /search index is full/.test(e.message));
  await assert.rejects(client.vectorStores.fileBatches.create(vs.id, { file_ids: [third.id] }), (e: any) => e.status === 400 && e.param === 'file_ids');
  const theirs = await other.files.create({ file: await toFile(Buffer.from('Their note about owls.'), 'owl.txt'), purpose: 'assistants' });
  const theirStore = await other.vectorStores.create({ file_ids: [theirs.id] });
  assert.equal((await fileSettled(other, theirStore.id, theirs.id)).status, 'completed', 'another account has its own cap');
});
