// Uploaded files (/v1/files): the row per file, its bytes in the blob store under
// `blob_key`. Files stay until deleted (SPEC "Lifetimes"); `expires_at` is kept for the
// files the service will write itself with an expiry (batch outputs).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('files')
    // file-… ids sort by creation (src/ids.ts), so pages are ordered by id alone.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    /** Served as the download's Content-Type. */
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    /** hex */
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('files_account').on('files').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('files_account_purpose').on('files').columns(['account_id', 'purpose', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('files').execute();
}
