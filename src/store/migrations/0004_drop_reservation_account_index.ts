// Every model call writes the ledger twice; each index on credit_reservations is one more
// page written per write. Nothing reads entries by account (the activity log answers
// per-account questions), so the (account_id, request_id) index only cost writes.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('credit_reservations_account').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('credit_reservations_account').on('credit_reservations').columns(['account_id', 'request_id']).execute();
}
