// The activity row says whether a request was moderated (the key's Moderate requests
// switch) and what was flagged: JSON {"flagged": ["violence", ...]} (an empty list: it
// was moderated and passed), null when it was not moderated. Categories only, never text.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('activity').addColumn('moderation', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('activity').dropColumn('moderation').execute();
}
