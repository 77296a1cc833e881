// Stored responses (SPEC "Response", "Lifetimes"): kept 30 days per account with their
// input items and the id they continued, in the database every instance shares, so
// `previous_response_id` works at once on any instance. Reads are scoped to the account
// and hide expired rows: another account's id looks exactly like an unknown one.
import type { Kysely } from 'kysely';
import type { Database, ResponsesTable } from '../../store/schema.ts';
import { sweepResponseEvents } from './event-log.ts';
import type { Item } from './items.ts';

export const STORED_RESPONSE_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** A chain longer than this is refused rather than walked (each link is a lookup). */
export const MAX_CHAIN_LINKS = 10_000;
const SWEEP_BATCH = 500;

export interface StoredResponse {
  response: Record<string, any>;
  inputItems: Item[];
  previousResponseId: string | null;
  conversationId: string | null;
  background: boolean;
  /** A background run's checked request, until it has run. */
  request: Record<string, any> | null;
  jobId: string | null;
}

export interface SaveResponse {
  accountId: string;
  response: Record<string, any>;
  inputItems: Item[];
  previousResponseId: string | null;
  conversationId: string | null;
  background?: boolean;
  request?: Record<string, unknown> | null;
  jobId?: string | null;
}

const COLUMNS = ['response', 'input_items', 'previous_response_id', 'conversation_id', 'background', 'request', 'job_id'] as const;

const toStored = (row: Pick<ResponsesTable, (typeof COLUMNS)[number]>): StoredResponse => ({
  response: JSON.parse(row.response),
  inputItems: JSON.parse(row.input_items),
  previousResponseId: row.previous_response_id,
  conversationId: row.conversation_id,
  background: Number(row.background) === 1,
  request: row.request ? JSON.parse(row.request) : null,
  jobId: row.job_id,
});

export class StoredResponses {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: () => number = Date.now,
    /** Where a finished response is saved: Store.relaxed (on PostgreSQL its commit does not wait for a disk flush). */
    private readonly saves: Kysely<Database> = db,
  ) {}

  /** `db`: a transaction to write in (a background response is stored with its job). */
  async save(input: SaveResponse, db: Kysely<Database> = this.saves): Promise<void> {
    const createdAt = typeof input.response.created_at === 'number' ? input.response.created_at * 1000 : this.clock();
    await db
      .insertInto('responses')
      .values({
        id: String(input.response.id),
        account_id: input.accountId,
        status: String(input.response.status),
        background: input.background ? 1 : 0,
        previous_response_id: input.previousResponseId,
        conversation_id: input.conversationId,
        response: JSON.stringify(input.response),
        input_items: JSON.stringify(input.inputItems),
        request: input.request ? JSON.stringify(input.request) : null,
        job_id: input.jobId ?? null,
        created_at: createdAt,
        expires_at: createdAt + STORED_RESPONSE_TTL_MS,
      })
      .execute();
  }

  /**
   * Replaces the response object (a background response's progress). With `onlyIf`,
   * only while its status is one of those: a cancel and a finishing run cannot both win.
   */
  async update(id: string, response: Record<string, unknown>, opts: { onlyIf?: string[]; keepRequest?: boolean } = {}): Promise<boolean> {
    let q = this.db
      .updateTable('responses')
      .set({ status: String(response.status), response: JSON.stringify(response), ...(opts.keepRequest ? {} : { request: null }) })
      .where('id', '=', id);
    if (opts.onlyIf) q = q.where('status', 'in', opts.onlyIf);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async get(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const row = await this.db
      .selectFrom('responses')
      .select([...COLUMNS])
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', this.clock())
      .executeTakeFirst();
    return row && toStored(row);
  }

  /** Any account's response by id (a background job reads its own). */
  async byId(id: string): Promise<(StoredResponse & { accountId: string }) | undefined> {
    const row = await this.db
      .selectFrom('responses')
      .select(['account_id', ...COLUMNS])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && { ...toStored(row), accountId: row.account_id };
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('responses').where('id', '=', id).where('account_id', '=', accountId).where('expires_at', '>', this.clock()).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * The whole conversation up to and including response `id`: each earlier response's
   * input items then output, oldest first; undefined when `id` is not visible. A link
   * that is gone (deleted or expired) ends the chain there.
   */
  async chain(accountId: string, id: string): Promise<{ items: Item[]; conversationId: string | null } | undefined> {
    const links: StoredResponse[] = [];
    let next: string | null = id;
    while (next !== null && links.length < MAX_CHAIN_LINKS) {
      const link = await this.get(accountId, next);
      if (!link) {
        if (links.length === 0) return undefined;
        break;
      }
      links.push(link);
      next = link.previousResponseId;
    }
    const items: Item[] = [];
    for (const link of links.reverse()) items.push(...link.inputItems, ...((link.response.output ?? []) as Item[]));
    return { items, conversationId: links[links.length - 1]?.conversationId ?? null };
  }

  /** Deletes expired responses (their logged events with them), and logged events past their day; returns how many responses. */
  async expire(): Promise<number> {
    await sweepResponseEvents(this.db, this.clock());
    let total = 0;
    for (;;) {
      const ids = await this.db.selectFrom('responses').select('id').where('expires_at', '<=', this.clock()).limit(SWEEP_BATCH).execute();
      if (ids.length === 0) return total;
      const r = await this.db.deleteFrom('responses').where('id', 'in', ids.map((r) => r.id)).executeTakeFirst();
      total += Number(r.numDeletedRows);
      if (ids.length < SWEEP_BATCH) return total;
    }
  }
}

export interface ItemPage {
  object: 'list';
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** One page of a response's input items (default order desc, as the reference). */
export function pageItems(items: readonly Item[], opts: { limit?: number | undefined; after?: string | undefined; order?: 'asc' | 'desc' | undefined }): ItemPage | 'unknown_after' {
  const ordered = opts.order === 'asc' ? [...items] : [...items].reverse();
  let start = 0;
  if (opts.after !== undefined) {
    const at = ordered.findIndex((i) => i.id === opts.after);
    if (at < 0) return 'unknown_after';
    start = at + 1;
  }
  const limit = opts.limit ?? 20;
  const data = ordered.slice(start, start + limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: start + limit < ordered.length };
}
