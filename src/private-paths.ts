// What the service keeps on disk (the database, file bytes) belongs to the accounts: the
// directories it creates are 0700 and its files 0600 whatever the umask, so another user
// of the machine reads nothing. One exception: a directory on the way to the sandbox root
// is 0711 (searchable, not listable), since containers run as other uids that must reach
// their own directories there (src/sandbox). Directories that already exist keep their
// mode (DATA_DIR may be a directory the operator shares), except the ones that are wholly
// ours: the blob directory and the SQLite files are tightened at start.
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;
/** Searchable by other users, not listable: on the way to the sandbox root. */
export const PASSAGE_DIR = 0o711;

/** True when `dir` is `target` or one of its ancestors. */
function contains(dir: string, target: string): boolean {
  const rel = path.relative(path.resolve(dir), path.resolve(target));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Creates `dir` and its missing parents, each 0700, or 0711 when one of `passages` lies
 * inside it. Modes are set with chmod, so the umask cannot widen or narrow them.
 */
export function makePrivateDir(dir: string, passages: readonly string[] = []): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) {
    const mode = passages.some((p) => contains(d, p)) ? PASSAGE_DIR : PRIVATE_DIR;
    try {
      fs.mkdirSync(d, { mode });
    } catch (err) {
      // Another process (an instance starting beside this one) made it first.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      continue;
    }
    fs.chmodSync(d, mode);
  }
}

/**
 * Takes group and other bits off an existing path of ours (a database or blob directory
 * made by an older version under umask 022). A path owned by someone else is left alone.
 */
export function tighten(file: string, mode: number): void {
  try {
    const st = fs.statSync(file);
    if ((st.mode & 0o077) !== 0) fs.chmodSync(file, mode);
  } catch {
    // Missing, or not ours to change.
  }
}

/**
 * The SQLite database file made 0600 before SQLite opens it: SQLite gives its -wal and
 * -shm files the database file's mode, so they are owner-only too.
 */
export function preparePrivateDatabaseFile(file: string): void {
  makePrivateDir(path.dirname(file));
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE));
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) tighten(f, PRIVATE_FILE);
}
