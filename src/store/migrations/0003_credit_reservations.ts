// The credit ledger's reservations: an estimate held before a model runs, settled to
// the actual charge (or released) when it ends. The row is the truth, so a restart can
// release reservations left open by a crash.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credit_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    /** micro-credits held */
    .addColumn('amount', 'bigint', (c) => c.notNull())
    /** open | settled | released */
    .addColumn('status', 'text', (c) => c.notNull())
    /** micro-credits charged when settled */
    .addColumn('charged', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint')
    .execute();
  await db.schema.createIndex('credit_reservations_request').on('credit_reservations').column('request_id').execute();
  await db.schema.createIndex('credit_reservations_open').on('credit_reservations').columns(['status', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('credit_reservations').execute();
}
