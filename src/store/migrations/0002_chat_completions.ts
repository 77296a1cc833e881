// Stored chat completions (`store: true`, kept 30 days) and their metadata as rows, so
// `metadata[key]=value` list filters run in SQL on SQLite and PostgreSQL alike.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chat_completions')
    // chatcmpl-… ids sort by creation (src/ids.ts), so pages are ordered by id alone.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    /** JSON object of strings ('{}' when none) */
    .addColumn('metadata', 'text', (c) => c.notNull())
    /** JSON chat.completion object as returned to the client */
    .addColumn('completion', 'text', (c) => c.notNull())
    /** JSON array: the request messages as sent */
    .addColumn('messages', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chat_completions_account').on('chat_completions').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('chat_completions_expires').on('chat_completions').column('expires_at').execute();

  await db.schema
    .createTable('chat_completion_metadata')
    .addColumn('completion_id', 'text', (c) => c.notNull().references('chat_completions.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('chat_completion_metadata_pk', ['completion_id', 'key'])
    .execute();
  // For a selective filter the planner can start from the pair instead of the account's rows.
  await db.schema
    .createIndex('chat_completion_metadata_pair')
    .on('chat_completion_metadata')
    .columns(['key', 'value', 'completion_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('chat_completion_metadata').execute();
  await db.schema.dropTable('chat_completions').execute();
}
