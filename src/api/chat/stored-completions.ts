// Stored chat completions (SPEC "Stored chat completion", "Lifetimes"): kept 30 days per
// account, listed by id cursor, filtered by model and metadata pairs in SQL. Every read
// is scoped to the account and hides expired rows, so another account's id and an
// expired id look exactly like an unknown one (undefined here, 404 in the routes).
import type { Kysely } from 'kysely';
import { invalidRequest } from '../../errors.ts';
import type { ChatCompletionsTable, Database } from '../../store/schema.ts';
import { messageIndex, storeMessage } from './store-messages.ts';
import type { ListPage, PageOptions } from '../list-page.ts';

export type { ListPage, PageOptions };

export const STORED_COMPLETION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const SWEEP_BATCH = 500;

export type Metadata = Record<string, string>;

export interface SaveInput {
  accountId: string;
  /** The chat.completion object as returned to the client (`id`, `created` in seconds, `model`, …). */
  completion: Record<string, unknown>;
  /** The request's messages as sent. */
  requestMessages: unknown[];
  metadata: Metadata | null;
}

/** The completion as returned to the client, plus its current `metadata` (`{}` when none). */
export type StoredCompletion = Record<string, unknown> & { id: string; metadata: Metadata };

export interface ListOptions extends PageOptions {
  model?: string;
  /** every pair must match */
  metadata?: Metadata | null;
}

export interface Deleted {
  id: string;
  object: 'chat.completion.deleted';
  deleted: true;
}

type Row = Pick<ChatCompletionsTable, 'completion' | 'metadata'>;

export class StoredCompletions {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: () => number = Date.now,
    /** Where a completion is saved: Store.relaxed (on PostgreSQL its commit does not wait for a disk flush). */
    private readonly saves: Kysely<Database> = db,
  ) {}

  async save(input: SaveInput): Promise<StoredCompletion> {
    const { completion } = input;
    const id = String(completion.id);
    // The completion's own `created` (seconds) starts its 30 days.
    const createdAt = typeof completion.created === 'number' ? completion.created * 1000 : this.clock();
    const metadata = input.metadata ?? {};
    const row: ChatCompletionsTable = {
      id,
      account_id: input.accountId,
      model: String(completion.model),
      created_at: createdAt,
      expires_at: createdAt + STORED_COMPLETION_TTL_MS,
      metadata: JSON.stringify(metadata),
      completion: JSON.stringify(completion),
      messages: JSON.stringify(input.requestMessages),
    };
    await this.saves.transaction().execute(async (trx) => {
      await trx.insertInto('chat_completions').values(row).execute();
      await insertPairs(trx, id, metadata);
    });
    return toObject(row);
  }

  async get(accountId: string, id: string): Promise<StoredCompletion | undefined> {
    const row = await this.visible(accountId, id).select(['completion', 'metadata']).executeTakeFirst();
    return row && toObject(row);
  }

  async list(accountId: string, options: ListOptions = {}): Promise<ListPage<StoredCompletion>> {
    const { limit, order } = page(options);
    let q = this.db
      .selectFrom('chat_completions')
      .select(['id', 'completion', 'metadata'])
      .where('account_id', '=', accountId)
      .where('expires_at', '>', this.clock());
    if (options.model !== undefined) q = q.where('model', '=', options.model);
    for (const [key, value] of Object.entries(options.metadata ?? {})) {
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('chat_completion_metadata as m')
            .select('m.completion_id')
            .whereRef('m.completion_id', '=', 'chat_completions.id')
            .where('m.key', '=', key)
            .where('m.value', '=', value),
        ),
      );
    }
    // Ids sort by creation, so the cursor is a plain comparison (a deleted cursor item still works).
    if (options.after !== undefined) q = q.where('id', order === 'asc' ? '>' : '<', options.after);
    const rows = await q.orderBy('id', order).limit(limit + 1).execute();
    return listPage(rows.slice(0, limit).map(toObject), rows.length > limit);
  }

  /** Replaces the metadata wholesale (null clears it); undefined when not visible. */
  async updateMetadata(accountId: string, id: string, metadata: Metadata | null): Promise<StoredCompletion | undefined> {
    const next = metadata ?? {};
    return this.db.transaction().execute(async (trx) => {
      // The update comes first so PostgreSQL holds the row lock while the pairs are replaced.
      const updated = await trx
        .updateTable('chat_completions')
        .set({ metadata: JSON.stringify(next) })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('expires_at', '>', this.clock())
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return undefined;
      await trx.deleteFrom('chat_completion_metadata').where('completion_id', '=', id).execute();
      await insertPairs(trx, id, next);
      const row = await trx.selectFrom('chat_completions').select(['completion', 'metadata']).where('id', '=', id).executeTakeFirstOrThrow();
      return toObject(row);
    });
  }

  async delete(accountId: string, id: string): Promise<Deleted | undefined> {
    // Metadata pairs go with the row (ON DELETE CASCADE).
    const result = await this.db
      .deleteFrom('chat_completions')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', this.clock())
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 0 ? undefined : { id, object: 'chat.completion.deleted', deleted: true };
  }

  /** The request messages of a visible completion, paged by message id; undefined when not visible. */
  async listMessages(accountId: string, id: string, options: PageOptions = {}): Promise<ListPage<Record<string, unknown>> | undefined> {
    const row = await this.visible(accountId, id).select('messages').executeTakeFirst();
    if (!row) return undefined;
    const { limit, order } = page(options);
    let messages = (JSON.parse(row.messages) as unknown[]).map((m, i) => storeMessage(id, i, m));
    if (options.after !== undefined) {
      const index = messageIndex(id, options.after);
      if (index === undefined) throw invalidRequest(`'${options.after}' is not a message of chat completion '${id}'.`, 'after');
      // Still in request order here, so a message's position is its index.
      messages = messages.filter((_, i) => (order === 'asc' ? i > index : i < index));
    }
    if (order === 'desc') messages.reverse();
    return listPage(messages.slice(0, limit), messages.length > limit);
  }

  /** Deletes expired rows in small batches (short transactions); returns how many went. */
  async sweepExpired(now: number = this.clock()): Promise<number> {
    let total = 0;
    for (;;) {
      const ids = await this.db.selectFrom('chat_completions').select('id').where('expires_at', '<=', now).limit(SWEEP_BATCH).execute();
      if (ids.length === 0) return total;
      const result = await this.db
        .deleteFrom('chat_completions')
        .where('id', 'in', ids.map((r) => r.id))
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      total += Number(result.numDeletedRows);
      if (ids.length < SWEEP_BATCH) return total;
    }
  }

  private visible(accountId: string, id: string) {
    return this.db
      .selectFrom('chat_completions')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', this.clock());
  }
}

async function insertPairs(db: Kysely<Database>, id: string, metadata: Metadata): Promise<void> {
  const pairs = Object.entries(metadata).map(([key, value]) => ({ completion_id: id, key, value }));
  if (pairs.length > 0) await db.insertInto('chat_completion_metadata').values(pairs).execute();
}

function toObject(row: Row): StoredCompletion {
  return { ...(JSON.parse(row.completion) as Record<string, unknown>), metadata: JSON.parse(row.metadata) as Metadata } as StoredCompletion;
}

function page(options: PageOptions): { limit: number; order: 'asc' | 'desc' } {
  return { limit: options.limit ?? 20, order: options.order ?? 'asc' };
}

function listPage<T extends { id?: unknown }>(data: T[], hasMore: boolean): ListPage<T> {
  return {
    object: 'list',
    data,
    first_id: data.length ? String(data[0]!.id) : null,
    last_id: data.length ? String(data[data.length - 1]!.id) : null,
    has_more: hasMore,
  };
}
