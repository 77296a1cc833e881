// Where container directories live. Run as root, programs run as unprivileged uids and
// bwrap binds a container's directory as that uid, so every directory above the root must
// be searchable by other users (o+x). A checkout under /root (0700) with the default
// DATA_DIR/containers is not: the service then makes a root of its own under a base other
// users can reach (/var/lib/agent-api, else the temp directory), and says so at start.
// It never changes the mode of a directory it did not make: the user's own directories
// stay as closed as they are. A directory it makes is 0711 (searchable, not listable);
// each container's directory under it is 0700 and owned by the container's uid.
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface SandboxRoot {
  /** Where container directories live (a real path: no link on the way). */
  root: string;
  /** Set when `root` is not the configured directory: why not (said at start-up). */
  note?: string;
  /** Set when no root the sandbox users can reach was found: why, and what to change (containers are off). */
  problem?: string;
}

/** A place a root may be made: `dir`, of which the service owns everything from `ownFrom` down. */
export interface RootCandidate {
  dir: string;
  ownFrom: string;
}

export interface ChooseRootOptions {
  /** AGENT_API_SANDBOX_DIR, or DATA_DIR/containers. */
  configured: string;
  /** AGENT_API_SANDBOX_DIR was set: an explicit choice is never moved elsewhere. */
  explicit: boolean;
  /** Programs run as other uids than the service's (it runs as root). Default: whether it does. */
  otherUsers?: boolean;
  /** Where a root is made instead, tried in order (default: fallbackCandidates). */
  fallbacks?: RootCandidate[];
}

/** The directory mode for what the service makes on the way to a container: searchable, not listable. */
export const ROOT_MODE = 0o711;

/**
 * The places tried when the configured root cannot be reached, named after the configured
 * directory so each service (each data directory) keeps its own, the same one at every start.
 */
export function fallbackCandidates(configured: string, uid = process.getuid?.() ?? 0): RootCandidate[] {
  const hash = createHash('sha256').update(path.resolve(configured)).digest('hex').slice(0, 16);
  const varLib = '/var/lib/agent-api';
  const tmp = path.join(os.tmpdir(), `agent-api-sandbox-${uid}-${hash}`);
  return [
    ...(uid === 0 ? [{ dir: path.join(varLib, `sandbox-${hash}`), ownFrom: varLib }] : []),
    { dir: tmp, ownFrom: tmp },
  ];
}

const exists = (p: string) =>
  fsp.lstat(p).then(
    () => true,
    () => false,
  );

/**
 * Makes `dir` and any missing directory above it, each made one ROOT_MODE whatever the
 * umask; a directory that exists already is left as it is.
 */
export async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !(await exists(d)); d = path.dirname(d)) missing.unshift(d);
  for (const d of missing) {
    try {
      await fsp.mkdir(d, { mode: ROOT_MODE });
    } catch (err) {
      // Made meanwhile by another start: checked like any existing directory.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    await fsp.chmod(d, ROOT_MODE);
  }
}

/** The first directory on the way to `dir` (itself included, links resolved) that other users cannot search, if any. */
export async function closedOnTheWay(dir: string): Promise<string | undefined> {
  let existing = path.resolve(dir);
  while (!(await exists(existing))) existing = path.dirname(existing);
  for (let d = await fsp.realpath(existing); ; d = path.dirname(d)) {
    const st = await fsp.stat(d);
    if ((st.mode & 0o001) === 0) return d;
    if (d === path.dirname(d)) return undefined;
  }
}

const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, '0');

async function describeClosed(dir: string): Promise<string> {
  const st = await fsp.stat(dir).catch(() => undefined);
  return st ? `${dir} is mode ${octal(st.mode)}` : `${dir} cannot be searched`;
}

/** Why the service cannot use `c` as a root, or undefined once it is made and checked. */
async function prepareCandidate(c: RootCandidate, uid: number): Promise<string | undefined> {
  const parent = path.dirname(c.ownFrom);
  if (!(await exists(parent))) return `${parent} does not exist`;
  const closed = await closedOnTheWay(parent);
  if (closed) return `${await describeClosed(closed)}`;
  try {
    await makeDirs(c.dir);
  } catch (err) {
    return `${c.dir} cannot be made: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
  }
  // What the service owns must be its own, made by it: not a link or a directory someone
  // else put there first (the temp directory is everyone's), nor one others may write in.
  for (let d = path.resolve(c.dir); ; d = path.dirname(d)) {
    const st = await fsp.lstat(d);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0 || (st.mode & 0o001) === 0) {
      return `${d} exists but is not a directory of the service's own (owned by uid ${uid}, mode ${octal(ROOT_MODE)})`;
    }
    if (d === path.resolve(c.ownFrom)) return undefined;
  }
}

/** The sandbox root to use, made and checked; a `problem` when there is none. */
export async function chooseSandboxRoot(o: ChooseRootOptions): Promise<SandboxRoot> {
  const configured = path.resolve(o.configured);
  const uid = process.getuid?.() ?? 0;
  const otherUsers = o.otherUsers ?? uid === 0;
  const closed = otherUsers ? await closedOnTheWay(configured) : undefined;
  if (!closed) {
    // Programs run as the service's own uid, or every directory on the way is searchable.
    try {
      await makeDirs(configured);
      return { root: await fsp.realpath(configured) };
    } catch (err) {
      // Containers are off, saying why; the rest of the service starts.
      const name = o.explicit ? `AGENT_API_SANDBOX_DIR ${configured}` : configured;
      return { root: configured, problem: `${name} cannot be made: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (set AGENT_API_SANDBOX_DIR to a writable directory)` };
    }
  }
  const why = `${configured} is not reachable by the sandbox's unprivileged users (${await describeClosed(closed)})`;
  if (o.explicit) {
    return {
      root: configured,
      problem: `AGENT_API_SANDBOX_DIR ${why}: give every directory above it o+x, or unset AGENT_API_SANDBOX_DIR to let the service choose`,
    };
  }
  const refused: string[] = [];
  for (const c of o.fallbacks ?? fallbackCandidates(configured, uid)) {
    const problem = await prepareCandidate(c, uid);
    if (!problem) return { root: await fsp.realpath(c.dir), note: `${why}, so containers live here` };
    refused.push(problem);
  }
  return {
    root: configured,
    problem: `${why}, and no other place could be made (${refused.join('; ')}): set AGENT_API_SANDBOX_DIR to a directory whose parents are all o+x`,
  };
}
