// What the service keeps on disk is owner-only whatever the umask: DATA_DIR and the
// directories made under it 0700 (one on the way to the sandbox root 0711: searchable by
// the container uids, not listable), the SQLite database with its -wal and -shm 0600,
// blobs 0600 in 0700 directories; an older install's database files and blob directory
// are tightened at start. On SQLite and PostgreSQL (the blobs are on disk for both).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { scratchDatabase } from '../../test/helpers/test-server.ts';
import { createApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { checkStorage } from './preflight.ts';

const postgres = process.env.TEST_DATABASE === 'postgres';
const modeOf = (p: string) => fs.statSync(p).mode & 0o777;
const octal = (m: number) => `0${m.toString(8)}`;

let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
let previousUmask: number;
before(async () => {
  scratch = await scratchDatabase();
  // The usual default, which made everything world-readable.
  previousUmask = process.umask(0o022);
});
after(async () => {
  process.umask(previousUmask);
  await scratch.cleanup();
});

/** Starts the app on `env` after the start-up checks, writes a blob, returns the paths to look at. */
async function start(env: Record<string, string>) {
  const full = { LOG_LEVEL: 'silent', ...(postgres ? { DATABASE_URL: scratch.url } : {}), ...env };
  const config = loadConfig(full);
  await checkStorage(config);
  const app = await createApp(config, { env: full });
  const blob = await app.services.blobs.put(Readable.from([Buffer.from('secret bytes')]), { maxBytes: 1024 });
  return { config, app, blobFile: path.join(config.blobDir, blob.key.slice(0, 2), blob.key) };
}

test('a fresh DATA_DIR, its database (with -wal and -shm) and its blobs are owner-only under umask 022', async () => {
  const parent = path.join(scratch.dir, 'fresh');
  const dataDir = path.join(parent, 'data');
  const { config, app, blobFile } = await start({ DATA_DIR: dataDir, AGENT_API_SANDBOX_DIR: path.join(scratch.dir, 'sandbox') });
  try {
    const dirs = [parent, dataDir, config.blobDir, path.join(config.blobDir, '.tmp'), path.dirname(blobFile)];
    for (const d of dirs) assert.equal(octal(modeOf(d)), '0700', d);
    assert.equal(octal(modeOf(blobFile)), '0600', 'a blob');
    if (!postgres) {
      const file = path.join(dataDir, 'agent-api.sqlite');
      // The app holds the database open in WAL mode: -wal and -shm exist now.
      for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(octal(modeOf(f)), '0600', f);
    }
  } finally {
    await app.close();
  }
});

test('a DATA_DIR that holds the sandbox root is searchable but not listable (container uids pass it); what it keeps stays private', async () => {
  const dataDir = path.join(scratch.dir, 'with-sandbox', 'data');
  const { config, app, blobFile } = await start({ DATA_DIR: dataDir });
  try {
    assert.equal(config.sandboxDir, path.join(dataDir, 'containers'));
    assert.equal(octal(modeOf(path.dirname(dataDir))), '0711');
    assert.equal(octal(modeOf(dataDir)), '0711');
    assert.equal(octal(modeOf(config.blobDir)), '0700');
    assert.equal(octal(modeOf(blobFile)), '0600');
    if (!postgres) assert.equal(octal(modeOf(path.join(dataDir, 'agent-api.sqlite'))), '0600');
  } finally {
    await app.close();
  }
});

test("an older install's world-readable database file and blob directory are made owner-only at start; DATA_DIR keeps its mode", async () => {
  const dataDir = path.join(scratch.dir, 'older');
  fs.mkdirSync(path.join(dataDir, 'blobs'), { recursive: true, mode: 0o755 });
  const file = path.join(dataDir, 'agent-api.sqlite');
  if (!postgres) {
    const old = new SQLite(file);
    old.pragma('journal_mode = WAL');
    old.close();
    assert.equal(octal(modeOf(file)), '0644', 'made as before');
  }
  const { config, app } = await start({ DATA_DIR: dataDir, AGENT_API_SANDBOX_DIR: path.join(scratch.dir, 'sandbox') });
  try {
    assert.equal(octal(modeOf(config.blobDir)), '0700');
    if (!postgres) for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(octal(modeOf(f)), '0600', f);
    assert.equal(octal(modeOf(dataDir)), '0755', 'a directory the operator made is left as it is');
  } finally {
    await app.close();
  }
});
