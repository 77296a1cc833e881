// The event log behind following a background response, on the database the run
// selected: a follower that hears no signal from the writer (another instance, Redis
// down) still gets every event by polling, in order, then the final event made from the
// stored object; a run started over (a shutdown requeued it) tells a follower of the
// earlier run to start again instead of mixing the two; the log goes a day after it was
// written, and with its response.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { scratchDatabase } from '../../../test/helpers/test-server.ts';
import { AccountsService } from '../../accounts/accounts-service.ts';
import { LocalSignals } from '../../cluster/signals.ts';
import { databaseAt } from '../../jobs/jobs.test-support.ts';
import { openStore, type Store } from '../../store/db.ts';
import { EVENT_LOG_TTL_MS, followResponse, ResponseEventLog, sweepResponseEvents } from './event-log.ts';
import type { StreamEvent } from './output-builder.ts';
import { StoredResponses } from './stored-responses.ts';

const quiet = { warn() {}, info() {} };

async function withResponse(fn: (w: { store: Store; stored: StoredResponses; accountId: string; id: string; response: Record<string, any> }) => Promise<void>): Promise<void> {
  const scratch = await scratchDatabase();
  const store = await openStore(databaseAt(scratch.url));
  try {
    const account = await new AccountsService(store.db).create(`acct-${randomUUID()}`, 1);
    const stored = new StoredResponses(store.db);
    const id = `resp_${randomUUID().replaceAll('-', '')}`;
    const response = { id, object: 'response', status: 'in_progress', output: [], created_at: Math.floor(Date.now() / 1000) };
    await stored.save({ accountId: account.id, response, inputItems: [], previousResponseId: null, conversationId: null, background: true });
    await fn({ store, stored, accountId: account.id, id, response });
  } finally {
    await store.close();
    await scratch.cleanup();
  }
}

const delta = (text: string): StreamEvent => ({ type: 'response.output_text.delta', delta: text });

test('a follower that hears no signal polls: every event in order, then the final event from the stored object', async () => {
  await withResponse(async ({ store, stored, accountId, id, response }) => {
    // Writer and follower on "two instances" whose signals do not meet.
    const writer = new ResponseEventLog(store.db, new LocalSignals(quiet), quiet).writer(id, 1);
    const followerLog = new ResponseEventLog(store.db, new LocalSignals(quiet), quiet);
    const got: StreamEvent[] = [];
    const gone = new AbortController();
    const following = (async () => {
      for await (const e of followResponse({ stored, events: followerLog, accountId, id, signal: gone.signal, pollMs: 20 })) got.push(e);
    })();
    writer.push([{ type: 'response.created' }, { type: 'response.in_progress' }, delta('a')]);
    await writer.flush();
    for (let i = 0; i < 500 && got.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(got.length, 3, 'seen while it runs');
    writer.push([delta('b')]);
    writer.push([delta('c')]);
    await writer.flush();
    await stored.update(id, { ...response, status: 'completed', output: ['done'] });
    await following;
    assert.deepEqual(got.map((e) => [e.type, e.sequence_number]), [
      ['response.created', 0],
      ['response.in_progress', 1],
      ['response.output_text.delta', 2],
      ['response.output_text.delta', 3],
      ['response.output_text.delta', 4],
      ['response.completed', 5],
    ]);
    assert.deepEqual((got.at(-1)!.response as { output: unknown }).output, ['done']);
    // Resumed after the end: only what comes after.
    const rest: StreamEvent[] = [];
    for await (const e of followResponse({ stored, events: followerLog, accountId, id, startingAfter: 3, signal: gone.signal, pollMs: 20 })) rest.push(e);
    assert.deepEqual(rest.map((e) => e.sequence_number), [4, 5]);
  });
});

test('a run started over: a follower of the earlier run is told to start again, not given a mix', async () => {
  await withResponse(async ({ store, stored, accountId, id }) => {
    const signals = new LocalSignals(quiet);
    const log = new ResponseEventLog(store.db, signals, quiet);
    const first = log.writer(id, 1);
    first.push([{ type: 'response.created' }, delta('first run ')]);
    await first.flush();
    const got: StreamEvent[] = [];
    const following = (async () => {
      for await (const e of followResponse({ stored, events: log, accountId, id, signal: new AbortController().signal, pollMs: 1_000 })) got.push(e);
    })();
    for (let i = 0; i < 500 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await log.reset(id);
    const second = log.writer(id, 2);
    second.push([{ type: 'response.created' }, delta('second run '), delta('goes further')]);
    await second.flush();
    await following;
    assert.deepEqual(got.map((e) => e.type), ['response.created', 'response.output_text.delta', 'error']);
    assert.equal(got.at(-1)!.sequence_number, 2);
    assert.match(String(got.at(-1)!.message), /restarted/);
  });
});

test('the log goes a day after it was written, and with its response', async () => {
  await withResponse(async ({ store, stored, accountId, id }) => {
    const log = new ResponseEventLog(store.db, new LocalSignals(quiet), quiet);
    const writer = log.writer(id, 1);
    writer.push([{ type: 'response.created' }]);
    await writer.flush();
    assert.equal(await sweepResponseEvents(store.db, Date.now()), 0);
    assert.equal(await log.lastSeq(id), 0);
    assert.equal(await sweepResponseEvents(store.db, Date.now() + EVENT_LOG_TTL_MS + 1_000), 1);
    assert.equal(await log.lastSeq(id), undefined);

    writer.push([delta('x')]);
    await writer.flush();
    assert.equal(await log.lastSeq(id), 1);
    assert.equal(await stored.delete(accountId, id), true);
    assert.equal(await log.lastSeq(id), undefined, 'deleted with the response');
  });
});
