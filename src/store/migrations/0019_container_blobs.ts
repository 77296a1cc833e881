// Containers on any instance (issue 12): a container's files are kept in the blob store
// too, so an instance other than the one that ran a program can rebuild /mnt/data.
// `files_version` counts changes to a container's files; an instance whose local copy is
// of an older version rebuilds it from the blobs before using it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('containers').addColumn('files_version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  /** The file's bytes in the blob store (null: a row from before this migration, kept on its host only). */
  await db.schema.alterTable('container_files').addColumn('blob_key', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('container_files').dropColumn('blob_key').execute();
  await db.schema.alterTable('containers').dropColumn('files_version').execute();
}
