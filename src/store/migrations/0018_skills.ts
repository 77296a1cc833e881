// Skills (issue 12 item 5): a skill and its numbered versions. A version's files are blobs
// (one per file) listed by its manifest; the rows only point at them. Version numbers are
// handed out by `next_version` (one UPDATE ... RETURNING), so two concurrent uploads never
// take the same number, and a deleted number is never given again.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('skills')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    /** the default version's SKILL.md name and description */
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('default_version', 'integer', (c) => c.notNull())
    /** the number the next version takes */
    .addColumn('next_version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('skills_account').on('skills').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('skill_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('skill_id', 'text', (c) => c.notNull().references('skills.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    /** JSON [{path, blob_key, bytes}], paths relative to the skill's folder */
    .addColumn('manifest', 'text', (c) => c.notNull())
    .addColumn('file_count', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('skill_versions_number').on('skill_versions').columns(['skill_id', 'version']).unique().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('skill_versions').execute();
  await db.schema.dropTable('skills').execute();
}
