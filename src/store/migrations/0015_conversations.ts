// Conversations (issue 10): a conversation per row, and its items in order, each kept as
// the item the API returns, so a response continuing the conversation reads them all
// with one query.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    /** JSON Record<string, string> ('{}' when none) */
    .addColumn('metadata', 'text', (c) => c.notNull())
    /** the position the next item takes */
    .addColumn('next_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('conversation_items')
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    /** JSON: the item as returned */
    .addColumn('item', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('conversation_items_pk', ['conversation_id', 'seq'])
    .addUniqueConstraint('conversation_items_item', ['conversation_id', 'item_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('conversation_items').execute();
  await db.schema.dropTable('conversations').execute();
}
