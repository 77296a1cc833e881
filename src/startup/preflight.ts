// Checks made before the database is opened, so a start that cannot work fails with one
// line naming the fix: the SQLite directory and the blob directory exist (or can be made)
// and take writes; PostgreSQL answers, within a bounded time. Directories made here are
// owner-only (src/private-paths.ts); one on the way to the sandbox root stays searchable.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Config } from '../config.ts';
import { makePrivateDir, PRIVATE_DIR, tighten } from '../private-paths.ts';
import { databaseError, reasonOf, StartupError } from './errors.ts';

const CONNECT_TIMEOUT_MS = 10_000;

export async function checkStorage(config: Pick<Config, 'database' | 'dataDir' | 'blobDir' | 'sandboxDir'>): Promise<void> {
  // Containers run as other uids (as root), which must pass every directory above the sandbox root.
  const passages = [config.sandboxDir];
  if (config.database.kind === 'sqlite') checkSqliteDir(config.database.file, config.dataDir, passages);
  else await checkPostgres(config.database.url);
  // File bytes live on disk whatever the database (src/blobs/).
  checkWritableDir(config.blobDir, config.blobDir === path.join(config.dataDir, 'blobs') ? 'DATA_DIR' : 'AGENT_API_BLOB_DIR', passages);
  // Wholly ours: one an older version made under umask 022 becomes owner-only.
  tighten(config.blobDir, PRIVATE_DIR);
}

function checkSqliteDir(file: string, dataDir: string, passages: readonly string[]): void {
  if (file === ':memory:') return;
  // Name the variable the user set: DATA_DIR, or DATABASE_URL=sqlite:<path>.
  checkWritableDir(path.dirname(file), file === path.join(dataDir, 'agent-api.sqlite') ? 'DATA_DIR' : 'DATABASE_URL', passages);
}

function checkWritableDir(dir: string, variable: string, passages: readonly string[]): void {
  const fix = `set ${variable} to a writable directory`;
  try {
    makePrivateDir(dir, passages);
  } catch (err) {
    throw new StartupError(`${variable} ${dir} cannot be created: ${reasonOf(err)} (${fix})`);
  }
  if (!fs.statSync(dir).isDirectory()) throw new StartupError(`${variable} ${dir} is not a directory (${fix})`);
  // access(W_OK) says yes to root on a read-only mount; writing a file tells the truth.
  const probe = path.join(dir, `.agent-api-write-check-${process.pid}`);
  try {
    fs.writeFileSync(probe, '');
    fs.rmSync(probe, { force: true });
  } catch (err) {
    throw new StartupError(`${variable} ${dir} is not writable: ${reasonOf(err)} (${fix})`);
  }
}

async function checkPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined); // a failure after connect() surfaces through the calls below
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    throw databaseError(err, { kind: 'postgres', url }) ?? err;
  } finally {
    await client.end().catch(() => undefined);
  }
}
