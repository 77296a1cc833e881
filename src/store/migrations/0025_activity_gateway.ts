// A gateway request's activity row keeps what the upstream aggregator said about it: its
// generation id (looked up by GET /api/gateway/v1/generation, per key), whether it was
// streamed, and how it finished. Null on every other row.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('activity').addColumn('upstream_id', 'text').execute();
  await db.schema.alterTable('activity').addColumn('streamed', 'integer').execute();
  await db.schema.alterTable('activity').addColumn('finish_reason', 'text').execute();
  await db.schema.createIndex('activity_key_upstream').on('activity').columns(['key_id', 'upstream_id']).where('upstream_id', 'is not', null).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('activity_key_upstream').execute();
  await db.schema.alterTable('activity').dropColumn('finish_reason').execute();
  await db.schema.alterTable('activity').dropColumn('streamed').execute();
  await db.schema.alterTable('activity').dropColumn('upstream_id').execute();
}
