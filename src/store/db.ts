// Opens the configured database (SQLite by default, PostgreSQL by DATABASE_URL) and
// applies the migration set. The dialect is chosen once, here.
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Driver, type SqliteDialectConfig } from 'kysely';
import pg from 'pg';
import * as sqliteVec from 'sqlite-vec';
import type { Config } from '../config.ts';
import { preparePrivateDatabaseFile } from '../private-paths.ts';
import { GroupCommit, type Write } from './group-commit.ts';
import { migrationProvider } from './migrations/index.ts';
import { SAFETY_NET_PAGES, startWalCheckpointer } from './wal-checkpointer.ts';
import type { Database } from './schema.ts';

export interface Store {
  readonly db: Kysely<Database>;
  /**
   * For writes a call's answer waits for but that need not wait for a disk flush: the
   * objects a call stores (a stored response, a stored chat completion). On PostgreSQL
   * its sessions commit with synchronous_commit off: the commit is acknowledged once in
   * PostgreSQL's memory (so a crash of this process after it loses nothing, and every
   * instance reads it at once), flushed by the WAL writer within wal_writer_delay with
   * the commits around it; only a crash of the database itself in that window could
   * lose it. The one synchronous commit on a call's path is then its credit
   * reservation's. On SQLite it is `db` (synchronous = NORMAL already).
   */
  readonly relaxed: Kysely<Database>;
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Appends many rows in one transaction, for write-heavy logs. On SQLite a cached
   * prepared statement per table skips query building (most of the cost at thousands of
   * rows a second); on PostgreSQL it is a multi-row insert.
   */
  appendRows<T extends keyof Database & string>(table: T, rows: readonly Database[T][]): Promise<void>;
  /**
   * SQLite only (undefined on PostgreSQL): runs `fn` on the raw better-sqlite3 connection
   * while holding Kysely's connection lock, so it can neither interleave with nor land
   * inside a Kysely transaction that is awaiting between statements. For hot paths
   * (the credit ledger) that run a few prepared statements synchronously.
   */
  readonly sqliteSync?: <T>(fn: (conn: SQLite.Database) => T) => Promise<T>;
  /**
   * SQLite only: runs `write` in a transaction shared with the other writes queued in the
   * same turn of the event loop (group-commit.ts); resolves after that commit. A queued
   * write is committed before any statement issued after it.
   */
  readonly sqliteWrite?: <T>(write: Write<T>) => Promise<T>;
  /**
   * PostgreSQL only: runs a named prepared statement (parsed and planned once per pooled
   * connection) on the pool Kysely uses. For the ledger's per-call statements.
   */
  readonly pgPrepared?: (name: string, text: string, values: unknown[]) => Promise<unknown[]>;
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// BIGINT columns hold micro-credits and millisecond times, well inside 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface StoreOptions {
  /** A pooled PostgreSQL connection failed while idle (e.g. the server restarted), or a background checkpoint failed. */
  onBackgroundError?: (err: Error) => void;
  /** SQLite: checkpoint the WAL on a worker thread this often (ms); 0 leaves it to SQLite, on the committing connection. */
  walCheckpointMs?: number;
}

export async function openStore(database: Config['database'], options: StoreOptions = {}): Promise<Store> {
  const onIdleError = options.onBackgroundError ?? (() => undefined);
  const sqlite = database.kind === 'sqlite' ? openSqlite(database.file) : null;
  const checkpointer =
    sqlite && options.walCheckpointMs && database.kind === 'sqlite' && database.file !== ':memory:'
      ? startWalCheckpointer(database.file, options.walCheckpointMs, (message) => onIdleError(new Error(`WAL checkpoint failed: ${message}`)))
      : undefined;
  if (sqlite && checkpointer) sqlite.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
  let group: GroupCommit | undefined;
  const pool = database.kind === 'postgres' ? postgresPool(database.url, onIdleError) : null;
  const db = sqlite
    ? new Kysely<Database>({ dialect: new OrderedSqliteDialect({ database: withStatementCache(sqlite) }, () => group?.commitQueued()) })
    : new Kysely<Database>({ dialect: new PostgresDialect({ pool: pool! }) });
  // A few connections, opened when first used.
  const relaxed = database.kind === 'postgres' ? new Kysely<Database>({ dialect: new PostgresDialect({ pool: postgresPool(database.url, onIdleError, { max: 4, asyncCommit: true }) }) }) : db;
  const sqliteSync = sqlite
    ? <T>(fn: (conn: SQLite.Database) => T): Promise<T> => db.getExecutor().provideConnection(async () => fn(sqlite))
    : undefined;
  if (sqlite && sqliteSync) group = new GroupCommit(sqlite, (fn) => sqliteSync(() => fn()));
  const store: Store = {
    db,
    relaxed,
    kind: database.kind,
    appendRows: sqlite && sqliteSync ? sqliteAppender(sqlite, sqliteSync) : (table, rows) => postgresAppend(db, table, rows),
    ...(sqliteSync ? { sqliteSync } : {}),
    ...(group ? { sqliteWrite: <T>(write: Write<T>) => group.run(write) } : {}),
    ...(pool ? { pgPrepared: async (name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows } : {}),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await group?.drain();
      await checkpointer?.stop();
      if (relaxed !== db) await relaxed.destroy();
      await db.destroy();
    },
  };
  try {
    await migrate(db);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/**
 * SQLite through Kysely, where whoever takes the connection first commits the writes
 * queued for group commit (`beforeUse`): a queued write then precedes every statement
 * issued after it, Kysely's own and the sync paths' alike.
 */
class OrderedSqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly beforeUse: () => void,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = async () => {
      const connection = await acquire();
      try {
        this.beforeUse();
      } catch (err) {
        await driver.releaseConnection(connection);
        throw err;
      }
      return connection;
    };
    return driver;
  }
}

/**
 * Kysely's SQLite driver prepares every query anew; compiling the same SQL text again is
 * a large share of a short query's cost. This keeps prepared statements by SQL text
 * (bounded: query shapes are few, but IN-lists vary).
 */
function withStatementCache(conn: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string) => {
    let stmt = cache.get(source);
    if (!stmt) {
      if (cache.size >= 1000) cache.clear();
      stmt = conn.prepare(source);
      cache.set(source, stmt);
    }
    return stmt;
  };
  return new Proxy(conn, { get: (target, prop, receiver) => (prop === 'prepare' ? prepare : Reflect.get(target, prop, receiver)) });
}

function sqliteAppender(conn: SQLite.Database, sync: NonNullable<Store['sqliteSync']>): Store['appendRows'] {
  const statements = new Map<string, { columns: string[]; run: (rows: readonly Record<string, unknown>[]) => void }>();
  return async (table, rows) => {
    if (rows.length === 0) return;
    let entry = statements.get(table);
    if (!entry) {
      const columns = Object.keys(rows[0]!);
      const stmt = conn.prepare(`insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`);
      const run = conn.transaction((batch: readonly Record<string, unknown>[]) => {
        for (const row of batch) stmt.run(columns.map((c) => row[c]));
      });
      entry = { columns, run };
      statements.set(table, entry);
    }
    const { run } = entry;
    await sync(() => run(rows as unknown as readonly Record<string, unknown>[]));
  };
}

async function postgresAppend<T extends keyof Database & string>(db: Kysely<Database>, table: T, rows: readonly Database[T][]): Promise<void> {
  // Chunks keep each statement under PostgreSQL's 65,535 bound parameters.
  for (let i = 0; i < rows.length; i += 500) {
    await db.insertInto(table).values(rows.slice(i, i + 500) as never).execute();
  }
}

function postgresPool(url: string, onIdleError: (err: Error) => void, opts: { max?: number; asyncCommit?: boolean } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, ...(opts.asyncCommit ? { options: '-c synchronous_commit=off' } : {}) });
  // Without a listener an idle client's error (server restart, connection killed) would
  // be thrown as an uncaught exception and stop the process; the pool replaces the client.
  pool.on('error', onIdleError);
  return pool;
}

function openSqlite(file: string): SQLite.Database {
  // Owner-only, with its -wal and -shm (SQLite gives them the database file's mode).
  if (file !== ':memory:') preparePrivateDatabaseFile(file);
  const conn = new SQLite(file);
  conn.pragma('journal_mode = WAL');
  // WAL with NORMAL is durable across application crashes; only an OS crash can lose the last commits.
  conn.pragma('synchronous = NORMAL');
  conn.pragma('busy_timeout = 5000');
  conn.pragma('foreign_keys = ON');
  // The vector index (vec0 tables of the vector stores); a prebuilt extension from npm.
  sqliteVec.load(conn);
  return conn;
}

async function migrate(db: Kysely<Database>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    // The cause keeps the driver's error code, which start-up turns into a one-line message.
    throw new Error(`Database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String(error)}`, { cause: error });
  }
}
