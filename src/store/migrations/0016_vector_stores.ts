// Vector stores (issue 11): stores, their files, file batches, and the passages (chunks)
// with their vectors. The search index lives beside the chunks and is kept in step by
// triggers (SQLite) or a generated column (PostgreSQL), so a chunk and its index entries
// are written and removed in the same transaction:
// - SQLite: an FTS5 table over the text (porter stemming; the store id as a column, so
//   a match is narrowed to a store inside the index) and a sqlite-vec `vec0` table
//   of the 384-dimension vectors, partitioned by vector store, with the file id as a
//   metadata column so a filtered search stays inside the index.
// - PostgreSQL: a generated `tsvector` with a GIN index; vectors are kept as float32
//   bytes and searched by an in-process index rebuilt from the table (pgvector is not
//   packaged for the PostgreSQL this project targets; see docs/retrieval.md).
import { sql, SqliteAdapter, type Kysely } from 'kysely';

/** The service's own embedder's dimension count (SPEC "Vector store": 384). */
export const INDEX_DIMENSIONS = 384;

export async function up(db: Kysely<any>): Promise<void> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('vector_stores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text')
    .addColumn('description', 'text')
    /** JSON Record<string, string> */
    .addColumn('metadata', 'text', (c) => c.notNull())
    /** null: never expires */
    .addColumn('expires_after_days', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_active_at', 'bigint', (c) => c.notNull())
    /** set on expiry (status expired); the row stays until deleted, the passages go */
    .addColumn('expired_at', 'bigint')
    /** bumped whenever the store's passages change, so in-process indexes know to reload */
    .addColumn('index_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('vector_stores_account').on('vector_stores').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('vector_store_file_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('vector_store_id', 'text', (c) => c.notNull().references('vector_stores.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    /** in_progress | cancelling | cancelled | completed (cancelled and completed also follow from the files) */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('vector_store_files')
    .addColumn('vector_store_id', 'text', (c) => c.notNull().references('vector_stores.id').onDelete('cascade'))
    .addColumn('file_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('batch_id', 'text')
    /** in_progress | completed | failed | cancelled */
    .addColumn('status', 'text', (c) => c.notNull())
    /** JSON {code, message} or null */
    .addColumn('last_error', 'text')
    /** JSON attributes or null */
    .addColumn('attributes', 'text')
    /** JSON {max_chunk_size_tokens, chunk_overlap_tokens} */
    .addColumn('chunking', 'text', (c) => c.notNull())
    .addColumn('usage_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
    /** the ingestion job */
    .addColumn('job_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** a listing cursor that sorts by creation (ids do not: they are the uploaded files') */
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('vector_store_files_pk', ['vector_store_id', 'file_id'])
    .execute();
  await db.schema.createIndex('vector_store_files_seq').on('vector_store_files').columns(['vector_store_id', 'seq']).execute();
  await db.schema.createIndex('vector_store_files_batch').on('vector_store_files').columns(['batch_id']).execute();
  await db.schema.createIndex('vector_store_files_account').on('vector_store_files').columns(['account_id', 'status']).execute();

  if (sqlite) {
    await sql`create table vector_store_chunks (
      id integer primary key,
      account_id text not null,
      vector_store_id text not null,
      file_id text not null,
      seq integer not null,
      text text not null,
      overlap_chars integer not null,
      tokens integer not null,
      bytes integer not null,
      embedding blob not null,
      unique (vector_store_id, file_id, seq)
    )`.execute(db);
    await sql`create virtual table vector_store_fts using fts5(text, vector_store_id, content='vector_store_chunks', content_rowid='id', tokenize='porter unicode61')`.execute(db);
    await sql.raw(`create virtual table vector_store_vec using vec0(vector_store_id text partition key, file_id text, embedding float[${INDEX_DIMENSIONS}] distance_metric=cosine)`).execute(db);
    await sql`create trigger vector_store_chunks_ai after insert on vector_store_chunks begin
      insert into vector_store_fts(rowid, text, vector_store_id) values (new.id, new.text, new.vector_store_id);
      insert into vector_store_vec(rowid, vector_store_id, file_id, embedding) values (new.id, new.vector_store_id, new.file_id, new.embedding);
    end`.execute(db);
    await sql`create trigger vector_store_chunks_ad after delete on vector_store_chunks begin
      insert into vector_store_fts(vector_store_fts, rowid, text, vector_store_id) values ('delete', old.id, old.text, old.vector_store_id);
      delete from vector_store_vec where rowid = old.id;
    end`.execute(db);
  } else {
    await sql`create table vector_store_chunks (
      id bigserial primary key,
      account_id text not null,
      vector_store_id text not null,
      file_id text not null,
      seq integer not null,
      text text not null,
      overlap_chars integer not null,
      tokens integer not null,
      bytes integer not null,
      embedding bytea not null,
      tsv tsvector generated always as (to_tsvector('english', text)) stored,
      unique (vector_store_id, file_id, seq)
    )`.execute(db);
    await sql`create index vector_store_chunks_tsv on vector_store_chunks using gin (tsv)`.execute(db);
  }
  await db.schema.createIndex('vector_store_chunks_store').on('vector_store_chunks').columns(['vector_store_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await sql`drop table vector_store_vec`.execute(db);
    await sql`drop table vector_store_fts`.execute(db);
  }
  await db.schema.dropTable('vector_store_chunks').execute();
  await db.schema.dropTable('vector_store_files').execute();
  await db.schema.dropTable('vector_store_file_batches').execute();
  await db.schema.dropTable('vector_stores').execute();
}
