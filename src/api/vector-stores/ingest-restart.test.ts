// A vector store file being indexed survives its server: stopped by SIGTERM or cut off by
// `kill -9` in the middle of ingestion, the next process resumes the job and the file
// ends `completed` with every passage exactly once (positions 0..n-1, none twice). The
// server is a real child process on the database the run selected.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import { freePort, startChildApp } from '../../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../../test/helpers/test-server.ts';
import { loadConfig } from '../../config.ts';
import { openStore } from '../../store/db.ts';

function startServer(scratch: { dir: string; url: string }, port: number): Promise<ChildProcess> {
  return startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: 'ingest-restart',
    AGENT_API_JOBS_POLL_MS: '50',
    AGENT_API_JOB_LEASE_MS: '1500',
  });
}

const TEXT = Array.from({ length: 6000 }, (_, i) => `Paragraph ${i} records the tide at berth ${i % 97} and the weather over the estuary.`).join('\n');

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`ingestion stopped by ${signal} resumes without a duplicated passage`, async () => {
    const scratch = await scratchDatabase();
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    let child = await startServer(scratch, port);
    const config = loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url, LOG_LEVEL: 'silent' });
    const store = await openStore(config.database);
    try {
      const admin = async (method: string, p: string, body?: unknown) =>
        (await fetch(`${origin}/admin/v1${p}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) })).json() as Promise<Record<string, any>>;
      const account = await admin('POST', '/accounts', { name: `ingest-${signal}-${Date.now()}`, credits: 10 });
      const { key } = await admin('POST', '/keys', { account_id: account.id, name: 'ingest', permissions: { file_search: true, files: true } });
      const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0 });
      const file = await client.files.create({ file: await toFile(Buffer.from(TEXT), 'tides.txt'), purpose: 'assistants' });
      const vs = await client.vectorStores.create({ name: 'restart' });
      await client.vectorStores.files.create(vs.id, { file_id: file.id, chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 20 } } });
      const written = async () => (await store.db.selectFrom('vector_store_chunks').select('seq').where('vector_store_id', '=', vs.id).execute()).length;
      for (let i = 0; i < 2000 && (await written()) === 0; i++) await delay(5);
      const before = await written();
      assert.ok(before > 0, 'some passages were written before the stop');
      child.kill(signal);
      await once(child, 'exit');
      const row = await store.db.selectFrom('vector_store_files').select(['status', 'chunk_count']).where('file_id', '=', file.id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'in_progress', 'stopped in the middle');

      child = await startServer(scratch, port);
      let f = await client.vectorStores.files.retrieve(file.id, { vector_store_id: vs.id });
      for (let i = 0; i < 1200 && f.status === 'in_progress'; i++) {
        await delay(25);
        f = await client.vectorStores.files.retrieve(file.id, { vector_store_id: vs.id });
      }
      assert.equal(f.status, 'completed');
      const done = await store.db.selectFrom('vector_store_files').select('chunk_count').where('file_id', '=', file.id).executeTakeFirstOrThrow();
      const seqs = (await store.db.selectFrom('vector_store_chunks').select('seq').where('vector_store_id', '=', vs.id).orderBy('seq').execute()).map((r) => Number(r.seq));
      assert.ok(done.chunk_count > before, 'the rest was written after the restart');
      assert.equal(seqs.length, done.chunk_count, 'one row per passage');
      assert.deepEqual(seqs, Array.from({ length: done.chunk_count }, (_, i) => i), 'every position once');
      const hits = await client.vectorStores.search(vs.id, { query: 'tide at berth 42' });
      assert.ok(hits.data.length > 0);
    } finally {
      await store.close();
      child.kill('SIGKILL');
      await once(child, 'exit').catch(() => undefined);
      await scratch.cleanup();
    }
  });
}
