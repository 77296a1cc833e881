// The admin token a first start generates when AGENT_API_ADMIN_TOKEN is unset: only its
// sha256 is kept. One row (id 'admin'); `agent-api admin-token rotate` replaces it, so a
// fixed primary key is also what lets one of two instances starting at once win.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('admin_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('admin_tokens').execute();
}
