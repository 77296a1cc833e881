// The credit ledger's usage entries: one per request that runs a model, holding an
// estimate while it runs, then the actual charge (or nothing, released). The row is the
// truth, so reservations left open by a crash can be released. Few indexes: both are
// written on every model call.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('credit_reservations')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    /** micro-credits held */
    .addColumn('amount', 'bigint', (c) => c.notNull())
    /** open | settled | released */
    .addColumn('status', 'text', (c) => c.notNull())
    /** micro-credits charged when settled */
    .addColumn('charged', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint')
    .execute();
  await db.schema.createIndex('credit_reservations_account').on('credit_reservations').columns(['account_id', 'request_id']).execute();
  await db.schema
    .createIndex('credit_reservations_open')
    .on('credit_reservations')
    .column('created_at')
    .where(sql.ref('status'), '=', 'open')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('credit_reservations').execute();
}
