// PostgreSQL: a crash between a call's answer and its settlement's commit loses nothing.
// The answer goes out before the settlement commits (settle-after-answer.test.ts); here
// the settlement is held back in the database (the ledger table locked from outside),
// the server is killed with SIGKILL after answering, and started again while the
// settlement still waits. PostgreSQL finishes the dead process's settlement alone; the
// restart's release of that process's holds waits for it and finds the hold settled,
// so the call is charged what its answer reported (not released, charging nothing), and
// its activity row, lost with the process, is rebuilt from the entry with its figures.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { adminAt, freePort, startChildApp } from '../../test/helpers/child-app.ts';
import { ADMIN_TOKEN, scratchDatabase } from '../../test/helpers/test-server.ts';
import { toMicro } from '../accounts/money.ts';

const postgres = process.env.TEST_DATABASE === 'postgres';
const skip = postgres ? false : 'PostgreSQL only: on SQLite the settlement commits in the process, before any later statement';

let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
before(async () => {
  if (postgres) scratch = await scratchDatabase();
});
after(async () => {
  await scratch?.cleanup();
});

const INSTANCE = 'settle-crash';

function startServer(port: number): Promise<ChildProcess> {
  return startChildApp(port, { DATA_DIR: scratch.dir, DATABASE_URL: scratch.url, AGENT_API_ADMIN_TOKEN: ADMIN_TOKEN, AGENT_API_INSTANCE_ID: INSTANCE });
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill(signal);
  await once(child, 'exit');
}

/** The settlements waiting for a lock (the dead process's, the restart's release). */
async function waitingSettlements(c: pg.Client): Promise<number> {
  const r = await c.query("select count(*)::int as n from pg_stat_activity where query like '%ledger_settle%' and wait_event_type = 'Lock' and pid <> pg_backend_pid()");
  return r.rows[0].n as number;
}

test('kill -9 between the answer and its settlement commit: the call stays charged what it answered, with its figures', { skip }, async () => {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const admin = adminAt(origin, ADMIN_TOKEN);
  const direct = new pg.Client({ connectionString: scratch.url });
  await direct.connect();
  const lock = new pg.Client({ connectionString: scratch.url });
  await lock.connect();
  let child = await startServer(port);
  let restarting: Promise<ChildProcess> | undefined;
  try {
    const account = await admin('POST', '/accounts', { name: 'settle-crash', credits: 10 });
    const { key, id: keyId } = await admin('POST', '/keys', { account_id: account.id, name: 'crash' });

    // Every settlement from now on waits for this lock.
    await lock.query('begin');
    await lock.query('lock table credit_reservations in exclusive mode');
    const res = await Promise.race([
      fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'Tell me about the sea' }] }),
      }),
      delay(30_000).then(() => null),
    ]);
    assert.ok(res, 'answered while its settlement could not commit');
    assert.equal(res.status, 200);
    const body = (await res.json()) as { svc: number; usage: { prompt_tokens: number; completion_tokens: number } };
    const requestId = res.headers.get('x-request-id')!;
    const svc = toMicro(body.svc);
    assert.ok(svc > 0);
    assert.equal((await direct.query('select 1 from credit_holds where request_id = $1', [requestId])).rowCount, 1, 'not committed when answered');

    // The process dies with its settlement sent and not committed, and starts again at once.
    await stop(child, 'SIGKILL');
    restarting = startServer(port);
    // Its start releases the dead process's holds: the one still being settled waits for that settlement.
    for (let i = 0; i < 1_200 && (await waitingSettlements(direct)) < 2; i++) await delay(50);
    assert.equal(await waitingSettlements(direct), 2, "the dead process's settlement and the restart's release both wait");
    await lock.query('commit');
    child = await restarting;
    restarting = undefined;

    const acct = await admin('GET', `/accounts/${account.id}`);
    assert.equal(acct.reserved_credits, 0);
    assert.equal(toMicro(acct.credits), toMicro(10) - svc, 'charged what the answer reported, not released for nothing');
    const entries = await direct.query('select status, charged, input_tokens, output_tokens from credit_reservations where request_id = $1', [requestId]);
    assert.equal(entries.rowCount, 1, 'settled once');
    assert.equal(entries.rows[0].status, 'settled');
    assert.equal(Number(entries.rows[0].charged), svc);
    assert.deepEqual([Number(entries.rows[0].input_tokens), Number(entries.rows[0].output_tokens)], [body.usage.prompt_tokens, body.usage.completion_tokens]);
    // Its activity row was still in the dead process's memory (rows wait for their entry): rebuilt with the figures.
    const rows = (await admin('GET', `/activity?key_id=${keyId}`)).data as { request_id: string; credits_settled: number; input_tokens: number; output_tokens: number; error_code: string | null }[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.request_id, requestId);
    assert.equal(toMicro(rows[0]!.credits_settled), svc);
    assert.deepEqual([rows[0]!.input_tokens, rows[0]!.output_tokens], [body.usage.prompt_tokens, body.usage.completion_tokens]);
    assert.equal(rows[0]!.error_code, 'recovered_after_crash');
  } finally {
    await lock.query('rollback').catch(() => undefined);
    await lock.end();
    if (restarting) child = await restarting.catch(() => child);
    await stop(child, 'SIGTERM');
    await direct.end();
  }
});
