// The ledger's per-call statements on PostgreSQL. The reservations (and, separately, the
// settlements) queued during one turn of the event loop go out as one call of a
// function (migration 0006): one round trip and one commit for them all, where one per
// call made the database's commit and the process switches of every round trip the
// limit. Each call still learns whether its own hold was taken or settled. Should a
// batch fail, each of its calls is tried alone, so only the one at fault fails.
// A reservation's commit is synchronous (the one on a model call's path); a settlement's
// is not (migration 0027), and nobody's answer waits for it (Ledger.settle).
import type { Store } from '../store/db.ts';
import type { CallFacts, ChargedFor, LedgerStatements, Reservation } from './ledger.ts';

interface Queued<T> {
  item: T;
  resolve(ok: boolean): void;
  reject(err: unknown): void;
}

/** Runs the items queued in one turn together; `run` returns the run ids that succeeded. */
class Batcher<T extends { runId: string }> {
  private queue: Queued<T>[] = [];

  constructor(private readonly run: (items: T[]) => Promise<Set<string>>) {}

  add(item: T): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(this.flush);
      this.queue.push({ item, resolve, reject });
    });
  }

  private readonly flush = (): void => {
    const batch = this.queue;
    this.queue = [];
    void this.send(batch);
  };

  private async send(batch: Queued<T>[]): Promise<void> {
    try {
      const done = await this.run(batch.map((q) => q.item));
      for (const q of batch) q.resolve(done.has(q.item.runId));
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      await Promise.all(batch.map((q) => this.send([q])));
    }
  }
}

interface ReserveItem {
  runId: string;
  requestId: string;
  accountId: string;
  keyId: string | null;
  amount: number;
  at: number;
  call: CallFacts | null;
}

interface SettleItem {
  runId: string;
  charge: number;
  at: number;
  usage: ChargedFor | null;
}

export function postgresStatements(prepared: NonNullable<Store['pgPrepared']>, instanceId: string, leaseMs: number): LedgerStatements {
  const ids = (rows: unknown[]) => new Set(rows.map((r) => (r as { id: string }).id));
  const reserves = new Batcher<ReserveItem>(async (items) =>
    ids(
      await prepared(
        'ledger_reserve',
        'select ledger_reserve as id from ledger_reserve($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint, $7::text, $8::bigint, $9::text[], $10::text[])',
        [
          items.map((i) => i.runId),
          items.map((i) => i.requestId),
          items.map((i) => i.accountId),
          items.map((i) => i.keyId),
          items.map((i) => i.amount),
          items[0]!.at,
          instanceId,
          items[0]!.at + leaseMs,
          items.map((i) => i.call?.endpoint ?? null),
          items.map((i) => i.call?.model ?? null),
        ],
      ),
    ),
  );
  const settles = new Batcher<SettleItem>(async (items) =>
    ids(
      await prepared('ledger_settle', 'select ledger_settle as id from ledger_settle($1::text[], $2::bigint[], $3::bigint, $4::bigint[], $5::bigint[], $6::bigint[])', [
        items.map((i) => i.runId),
        items.map((i) => i.charge),
        items[0]!.at,
        items.map((i) => i.usage?.inputTokens ?? 0),
        items.map((i) => i.usage?.outputTokens ?? 0),
        items.map((i) => i.usage?.costUsd ?? 0),
      ]),
    ),
  );
  return {
    ordered: false,
    reserve: (r: Reservation, keyId, call, now) => reserves.add({ runId: r.runId, requestId: r.requestId, accountId: r.accountId, keyId, amount: r.amount, at: now, call }),
    settle: (r: Reservation, charge, usage, now) => settles.add({ runId: r.runId, charge, at: now, usage }),
  };
}
