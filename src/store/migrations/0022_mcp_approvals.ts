// An MCP approval is answered once for the whole service (issue 20): before an approved
// call runs, or a declined one is recorded, the answering response claims the approval
// request's id here. The primary key makes the claim atomic on either engine, so two
// requests answering at once, a retry after a dropped connection, a `store: false`
// continuation or a second instance can never run the same approved call twice.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_approvals')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('approval_request_id', 'text', (c) => c.notNull())
    .addColumn('approved', 'integer', (c) => c.notNull())
    // The request that answered it (its X-Request-Id).
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('mcp_approvals_pkey', ['account_id', 'approval_request_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('mcp_approvals').execute();
}
