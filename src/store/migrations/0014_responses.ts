// Responses (issue 10): the stored response object, its input items, and the link to
// the response it continued, so any instance can rebuild a chain at once.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    /** 1: a background response (cancellable while queued or in progress) */
    .addColumn('background', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('previous_response_id', 'text')
    .addColumn('conversation_id', 'text')
    /** JSON: the response object as returned */
    .addColumn('response', 'text', (c) => c.notNull())
    /** JSON: the input items (ids given), as GET /responses/{id}/input_items lists them */
    .addColumn('input_items', 'text', (c) => c.notNull())
    /** JSON: what a background run needs to start (the checked request and the key), until it has run */
    .addColumn('request', 'text')
    /** the job that runs a background response */
    .addColumn('job_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('responses_expiry').on('responses').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('responses').execute();
}
