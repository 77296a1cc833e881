// `kill -9` after a batch line was charged and before its outcome was recorded: the line
// ran (the ledger holds its charge) but its answer is gone. After the restart its report
// shows its charge and its request id, never "not run again", and the batch's credits
// and token usage add up to what the ledger charged for its lines. The window is made
// wide on purpose: an embeddings line of large vectors takes a while to record.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import { toMicro } from '../../accounts/money.ts';
import { loadConfig } from '../../config.ts';
import { openStore, type Store } from '../../store/db.ts';
import { freePort, startChildApp } from '../../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../../test/helpers/test-server.ts';

const LINES = 4;

let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
let store: Store;
before(async () => {
  scratch = await scratchDatabase();
});
after(async () => {
  await store?.close();
  await scratch.cleanup();
});

function startServer(port: number): Promise<ChildProcess> {
  return startChildApp(port, {
    DATA_DIR: scratch.dir,
    DATABASE_URL: scratch.url,
    AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENT_API_INSTANCE_ID: 'batch-charged',
    AGENT_API_JOBS_POLL_MS: '50',
    AGENT_API_BATCH_CONCURRENCY: '1',
  });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, 'exit');
}

const readLines = async (client: OpenAI, id: string | null | undefined) =>
  id ? (await (await client.files.content(id)).text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>) : [];

test('a line charged before kill -9 is reported with its charge, and the batch usage equals the ledger', async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let child = await startServer(port);
  try {
    const admin = async (p: string, body: unknown) =>
      (await fetch(`${origin}/admin/v1${p}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<
        Record<string, any>
      >;
    const account = await admin('/accounts', { name: `batch-charged-${Date.now()}`, credits: 100 });
    const { key } = await admin('/keys', { account_id: account.id, name: 'batch', permissions: { files: true, embeddings: true } });
    const client = new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0 });
    // Each answer holds 120 vectors of 3,072 values: recording one takes a while.
    const input = Array.from({ length: 120 }, (_, i) => `passage ${i} about the quarterly figures of the northern region`);
    const lines = Array.from({ length: LINES }, (_, i) => ({ custom_id: `e-${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-large', input } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n')), 'e.jsonl'), purpose: 'batch' });
    const { id } = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' });

    // Killed the moment a line is charged and its outcome not yet recorded.
    store = await openStore(loadConfig({ DATA_DIR: scratch.dir, DATABASE_URL: scratch.url }).database);
    const charged = () => store.db.selectFrom('credit_reservations').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', account.id).where('charged', '>', 0).executeTakeFirstOrThrow();
    const recorded = () => store.db.selectFrom('batch_lines').select((eb) => eb.fn.countAll<number>().as('n')).where('batch_id', '=', id).where('state', '=', 'done').executeTakeFirstOrThrow();
    let caught = false;
    for (let i = 0; i < 6_000 && !caught; i++) {
      if (Number((await charged()).n) > Number((await recorded()).n)) caught = true;
      else await delay(5);
    }
    assert.ok(caught, 'a line was charged and not yet recorded');
    await stop(child, 'SIGKILL');

    child = await startServer(port);
    let batch = await client.batches.retrieve(id);
    for (let i = 0; i < 3_000 && batch.status !== 'completed'; i++) {
      await delay(30);
      batch = await client.batches.retrieve(id);
    }
    assert.equal(batch.status, 'completed');
    const out = await readLines(client, batch.output_file_id);
    const errors = await readLines(client, batch.error_file_id);
    assert.equal(out.length + errors.length, LINES);

    const entries = await store.db.selectFrom('credit_reservations').selectAll().where('account_id', '=', account.id).execute();
    const reported = new Map([...out, ...errors].map((o) => [o.response?.request_id as string, o]));
    for (const e of entries.filter((e) => Number(e.charged) > 0)) {
      const line = reported.get(e.request_id);
      assert.ok(line, `the charged request ${e.request_id} is reported`);
      const body = line.response.body;
      assert.equal(toMicro(body.svc), Number(e.charged), 'with its charge');
      if (body.error) {
        assert.doesNotMatch(body.error.message, /not run again/);
        assert.match(body.error.message, /charged/);
        assert.equal(body.usage.prompt_tokens, Number(e.input_tokens));
      }
    }
    assert.ok(errors.some((e) => e.response?.body?.error && toMicro(e.response.body.svc) > 0), 'the line cut off after its charge is in the error file with it');
    // The batch's usage is the ledger's.
    const ledgerCredits = entries.reduce((n, e) => n + Number(e.charged), 0);
    const ledgerTokens = entries.filter((e) => Number(e.charged) > 0).reduce((n, e) => n + Number(e.input_tokens), 0);
    assert.equal(toMicro((batch as unknown as { svc: number }).svc), ledgerCredits);
    assert.equal(batch.usage!.input_tokens, ledgerTokens);
    assert.ok(ledgerTokens > 0);
  } finally {
    await stop(child, 'SIGTERM');
  }
});
