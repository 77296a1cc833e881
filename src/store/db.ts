// Opens the configured database (SQLite by default, PostgreSQL by DATABASE_URL) and
// applies the migration set. The dialect is chosen once, here.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.ts';
import { migrationProvider } from './migrations/index.ts';
import type { Database } from './schema.ts';

export interface Store {
  readonly db: Kysely<Database>;
  readonly kind: 'sqlite' | 'postgres';
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// BIGINT columns hold micro-credits and millisecond times, well inside 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export async function openStore(database: Config['database']): Promise<Store> {
  const db =
    database.kind === 'postgres'
      ? new Kysely<Database>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 10 }) }),
        })
      : new Kysely<Database>({ dialect: new SqliteDialect({ database: openSqlite(database.file) }) });
  const store: Store = {
    db,
    kind: database.kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
  try {
    await migrate(db);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return store;
}

function openSqlite(file: string): SQLite.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const conn = new SQLite(file);
  conn.pragma('journal_mode = WAL');
  // WAL with NORMAL is durable across application crashes; only an OS crash can lose the last commits.
  conn.pragma('synchronous = NORMAL');
  conn.pragma('busy_timeout = 5000');
  conn.pragma('foreign_keys = ON');
  return conn;
}

async function migrate(db: Kysely<Database>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`Database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`);
  }
}
