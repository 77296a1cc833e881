// Message Batches (issue 23) run on the batch job of /v1 (migration 0013): a batch row
// says which surface it belongs to, so each surface lists and finds only its own; a
// messages-style batch keeps its requests as a JSONL blob (they arrive in the request
// body, not as an uploaded file) and counts the requests its 24 h window left unrun.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('batches').addColumn('surface', 'text', (c) => c.notNull().defaultTo('v1')).execute();
  await db.schema.alterTable('batches').addColumn('input_blob', 'text').execute();
  await db.schema.alterTable('batches').addColumn('expired', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('batches').dropColumn('expired').execute();
  await db.schema.alterTable('batches').dropColumn('input_blob').execute();
  await db.schema.alterTable('batches').dropColumn('surface').execute();
}
