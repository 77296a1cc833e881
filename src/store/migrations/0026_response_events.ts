// The events of a background response as it runs (issue 25), so that a client can follow
// it from any instance while it runs and resume from the last event it saw: each row is
// a batch of consecutive events (`seq` to `last_seq`) of one attempt of the job. Deleted
// with the response, and a day after they were written.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('response_events')
    .addColumn('response_id', 'text', (c) => c.notNull().references('responses.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('last_seq', 'integer', (c) => c.notNull())
    // The job attempt that ran them: a run started again (after a shutdown) starts its events over.
    .addColumn('attempt', 'integer', (c) => c.notNull())
    // JSON: the events, each with its sequence_number
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('response_events_pkey', ['response_id', 'seq'])
    .execute();
  await db.schema.createIndex('response_events_created').on('response_events').columns(['created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('response_events').execute();
}
