// A key's own output cap (SPEC: max_tokens is "also capped by the key"): null, no cap
// beyond the request's and the service default.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('max_output_tokens', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('max_output_tokens').execute();
}
