// Checks once the hostile requests are done: the admin API still works, the other
// account's objects are as they were, and the database holds no row and no charge for
// a refused request.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import type { Outcome } from './checks.ts';
import type { Case } from './case.ts';
import { checkLedger, type LedgerFindings, type Snapshot } from './ledger-check.ts';

/** The admin API must still list and create (a polluted prototype breaks strict schemas). */
export async function adminStillWorks(origin: string, adminToken: string): Promise<{ problems: string[]; created: string[] }> {
  const problems: string[] = [];
  const created: string[] = [];
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  try {
    const list = await fetch(`${origin}/admin/v1/accounts`, { headers });
    const body = (await list.json()) as { object?: string; data?: unknown[] };
    if (list.status !== 200 || body.object !== 'list' || !Array.isArray(body.data)) problems.push(`GET /admin/v1/accounts: ${list.status}`);
    const made = await fetch(`${origin}/admin/v1/accounts`, { method: 'POST', headers, body: JSON.stringify({ name: `fuzz-after-${Date.now()}`, credits: 1 }) });
    const account = (await made.json()) as { id?: string; credits?: number };
    if (made.status !== 201 || typeof account.id !== 'string' || account.credits !== 1) problems.push(`POST /admin/v1/accounts: ${made.status} ${JSON.stringify(account)}`);
    if (account.id) created.push(account.id);
  } catch (err) {
    problems.push(`the admin API did not answer: ${String(err)}`);
  }
  return { problems, created };
}

/** Key B's objects, read again with key B: byte for byte what set-up saw. */
export async function othersUnchanged(origin: string, keyB: string, objects: readonly { path: string; body: string }[]): Promise<string[]> {
  const changed: string[] = [];
  for (const o of objects) {
    const res = await fetch(origin + o.path, { headers: { authorization: `Bearer ${keyB}` } });
    const text = await res.text();
    if (res.status !== 200 || text !== o.body) changed.push(`${o.path}: was ${o.body.slice(0, 120)}, now ${res.status} ${text.slice(0, 120)}`);
  }
  return changed;
}

/**
 * The gateway's forwarded request bodies as its upstream received them (`received`: their
 * SHA-256): byte for byte what the caller sent. Judged for plainly framed requests (the
 * case did not frame the body itself) that reached the upstream: answered 2xx, or its
 * refusal passed through.
 */
export function forwardedUnchanged(sent: readonly { c: Case; outcome: Outcome; disturbed?: boolean; websocket?: true }[], received: ReadonlySet<string>): string[] {
  const changed: string[] = [];
  for (const s of sent) {
    const { op } = s.c;
    if (s.disturbed || s.websocket || !op.passthrough || op.method !== 'POST' || s.outcome.status === null || !(s.outcome.status < 300 || s.outcome.upstream)) continue;
    const req = s.c.build();
    const framed = req.frame === 'none' || req.endAfterWrite || req.headers.some(([n]) => ['content-length', 'transfer-encoding'].includes(n.toLowerCase()));
    if (!req.body?.length || framed || req.method !== 'POST') continue;
    if (!received.has(createHash('sha256').update(req.body).digest('hex'))) {
      changed.push(`${s.c.category} ${op.id} (${s.c.note.slice(0, 100)}): answered ${s.outcome.status}, but the upstream never received the ${req.body.length} bytes sent`);
    }
  }
  return changed;
}

/**
 * The ledger and object tables against the answers: what a 2xx answer named may have
 * been written and charged; nothing else. A's and B's balances: set-up's minus the
 * charges of their 2xx requests.
 */
export async function ledgerAfter(
  db: Kysely<Database>,
  run: {
    before: Snapshot;
    balancesBefore: { id: string; balance: number }[];
    answered: readonly { c: Case; outcome: Outcome; websocket?: true }[];
    alsoNamed: readonly string[];
    blobDir?: string;
    /** the key of the Responses WebSocket messages */
    websocketKeyId?: string;
  },
): Promise<LedgerFindings> {
  const outcomes = run.answered.map((s) => s.outcome);
  const ids = (pick: (status: number) => boolean) => new Set(outcomes.filter((o) => o.status !== null && pick(o.status) && o.requestId).map((o) => o.requestId!));
  const fixedAccounts = run.balancesBefore.map((b) => b.id);
  const findings = await checkLedger(db, {
    before: run.before,
    ok: ids((status) => status < 300),
    refused: ids((status) => status >= 400),
    upstreamRefused: new Set(outcomes.filter((o) => o.upstream && o.requestId).map((o) => o.requestId!)),
    named: new Set([...outcomes.flatMap((o) => (o.status !== null && o.status < 300 ? o.ids : [])), ...run.alsoNamed]),
    fixedAccounts,
    // (and the accounts made after the run, each with its grant)
    adminPosts: run.answered.filter((s) => s.c.op.surface === 'admin' && s.c.op.method === 'POST' && (s.outcome.status ?? 999) < 300).length + run.alsoNamed.length,
    ...(run.blobDir ? { blobDir: run.blobDir } : {}),
    ...(run.websocketKeyId ? { websocket: { keyId: run.websocketKeyId, ran: run.answered.filter((s) => s.websocket && s.outcome.status === 200).length } } : {}),
  });
  const after = await db.selectFrom('accounts').select(['id', 'balance']).where('id', 'in', fixedAccounts).execute();
  for (const b of run.balancesBefore) {
    const now = Number(after.find((a) => a.id === b.id)?.balance);
    const expected = Number(b.balance) - (findings.charged[b.id] ?? 0);
    if (now !== expected) findings.booksUnbalanced.push(`${b.id}: balance ${now}, set-up balance ${b.balance} minus charges of 2xx requests = ${expected}`);
  }
  return findings;
}
