// Conversations (SPEC "Conversation", "Conversations"): per account, with their items in
// order. Every read is scoped to the account, so another account's conversation or item
// looks exactly like an unknown one (undefined here, 404 in the routes); every write is
// one transaction, so a refused or failed add leaves no item behind.
import type { Kysely, Transaction } from 'kysely';
import { invalidRequest } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Database } from '../../store/schema.ts';
import { toItem, type Item } from '../responses/items.ts';

export type Metadata = Record<string, string>;

export interface ConversationObject {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Metadata;
}

export interface ItemPage {
  object: 'list';
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const toObject = (row: { id: string; created_at: number | string; metadata: string }): ConversationObject => ({
  id: row.id,
  object: 'conversation',
  created_at: Math.floor(Number(row.created_at) / 1000),
  metadata: JSON.parse(row.metadata),
});

export class Conversations {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: () => number = Date.now,
  ) {}

  async create(accountId: string, input: { items?: readonly Record<string, unknown>[] | null; metadata?: Metadata | null }): Promise<ConversationObject> {
    const items = (input.items ?? []).map(toItem);
    const row = { id: newId('conv_'), account_id: accountId, metadata: JSON.stringify(input.metadata ?? {}), next_seq: items.length, created_at: this.clock() };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('conversations').values(row).execute();
      await this.insertItems(trx, row.id, 0, items, 'items');
    });
    return toObject(row);
  }

  async get(accountId: string, id: string): Promise<ConversationObject | undefined> {
    const row = await this.db.selectFrom('conversations').select(['id', 'created_at', 'metadata']).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return row && toObject(row);
  }

  async updateMetadata(accountId: string, id: string, metadata: Metadata | null): Promise<ConversationObject | undefined> {
    const r = await this.db.updateTable('conversations').set({ metadata: JSON.stringify(metadata ?? {}) }).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0 ? this.get(accountId, id) : undefined;
  }

  /** Deletes the conversation and its items; false when not visible. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const owned = await trx.selectFrom('conversations').select('id').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      if (!owned) return false;
      await trx.deleteFrom('conversation_items').where('conversation_id', '=', id).execute();
      await trx.deleteFrom('conversations').where('id', '=', id).execute();
      return true;
    });
  }

  /** Adds checked input items (ids given or made); undefined when not visible. */
  async addItems(accountId: string, id: string, raw: readonly Record<string, unknown>[]): Promise<Item[] | undefined> {
    return this.append(accountId, id, raw.map(toItem), 'items');
  }

  /** Appends kept items (a response's input and output); undefined when not visible. */
  async append(accountId: string, id: string, items: Item[], param = 'conversation'): Promise<Item[] | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // Taking the positions first serializes concurrent appends to one conversation.
      const claimed = await trx
        .updateTable('conversations')
        .set((eb) => ({ next_seq: eb('next_seq', '+', items.length) }))
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .returning('next_seq')
        .executeTakeFirst();
      if (!claimed) return undefined;
      await this.insertItems(trx, id, Number(claimed.next_seq) - items.length, items, param);
      return items;
    });
  }

  private async insertItems(trx: Transaction<Database>, conversationId: string, first: number, items: Item[], param: string): Promise<void> {
    if (items.length === 0) return;
    const ids = new Set<string>();
    items.forEach((item, i) => {
      if (ids.has(item.id)) throw invalidRequest(`Two items have the id '${item.id}'.`, `${param}[${i}].id`);
      ids.add(item.id);
    });
    const taken = await trx.selectFrom('conversation_items').select('item_id').where('conversation_id', '=', conversationId).where('item_id', 'in', [...ids]).executeTakeFirst();
    if (taken) throw invalidRequest(`The conversation already has an item with id '${taken.item_id}'.`, `${param}[${items.findIndex((i) => i.id === taken.item_id)}].id`);
    await trx
      .insertInto('conversation_items')
      .values(items.map((item, i) => ({ conversation_id: conversationId, seq: first + i, item_id: item.id, item: JSON.stringify(item) })))
      .execute();
  }

  /** Every item in order (oldest first), for a response that continues the conversation. */
  async allItems(accountId: string, id: string): Promise<Item[] | undefined> {
    if (!(await this.get(accountId, id))) return undefined;
    const rows = await this.db.selectFrom('conversation_items').select('item').where('conversation_id', '=', id).orderBy('seq', 'asc').execute();
    return rows.map((r) => JSON.parse(r.item) as Item);
  }

  async listItems(accountId: string, id: string, opts: { limit?: number; after?: string; order?: 'asc' | 'desc' }): Promise<ItemPage | undefined | 'unknown_after'> {
    if (!(await this.get(accountId, id))) return undefined;
    const order = opts.order ?? 'desc';
    const limit = opts.limit ?? 20;
    let q = this.db.selectFrom('conversation_items').select(['item', 'seq']).where('conversation_id', '=', id);
    if (opts.after !== undefined) {
      const cursor = await this.db.selectFrom('conversation_items').select('seq').where('conversation_id', '=', id).where('item_id', '=', opts.after).executeTakeFirst();
      if (!cursor) return 'unknown_after';
      q = q.where('seq', order === 'asc' ? '>' : '<', cursor.seq);
    }
    const rows = await q.orderBy('seq', order).limit(limit + 1).execute();
    const data = rows.slice(0, limit).map((r) => JSON.parse(r.item) as Item);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
  }

  async getItem(accountId: string, id: string, itemId: string): Promise<Item | undefined> {
    if (!(await this.get(accountId, id))) return undefined;
    const row = await this.db.selectFrom('conversation_items').select('item').where('conversation_id', '=', id).where('item_id', '=', itemId).executeTakeFirst();
    return row && (JSON.parse(row.item) as Item);
  }

  /** Deletes one item; the conversation, or undefined when it or the item is not visible. */
  async deleteItem(accountId: string, id: string, itemId: string): Promise<ConversationObject | undefined> {
    const conversation = await this.get(accountId, id);
    if (!conversation) return undefined;
    const r = await this.db.deleteFrom('conversation_items').where('conversation_id', '=', id).where('item_id', '=', itemId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0 ? conversation : undefined;
  }
}
