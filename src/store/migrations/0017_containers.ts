// Containers (issue 12): a row per container and per file in its /mnt/data. The files
// themselves live in the sandbox's directory on the host; these rows are what the API
// lists, kept in step with the directory (files a program wrote get rows when the
// container's files are listed).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('containers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    /** 1 to 60, anchored at last_active_at */
    .addColumn('expires_after_minutes', 'integer', (c) => c.notNull())
    /** JSON [{skill_id, version}] or null: the skills mounted read-only at /mnt/skills/<name> */
    .addColumn('skills', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_active_at', 'bigint', (c) => c.notNull())
    /** set on expiry (status expired): the files are gone, the row stays a while to say so */
    .addColumn('expired_at', 'bigint')
    .execute();
  await db.schema.createIndex('containers_account').on('containers').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('containers_expiry').on('containers').columns(['expired_at', 'last_active_at']).execute();

  await db.schema
    .createTable('container_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('container_id', 'text', (c) => c.notNull().references('containers.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    /** /mnt/data/<relative path> */
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    /** user (added through the API) | assistant (written by a program) */
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('container_files_path', ['container_id', 'path'])
    .execute();
  await db.schema.createIndex('container_files_list').on('container_files').columns(['container_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('container_files').execute();
  await db.schema.dropTable('containers').execute();
}
