// Containers in bubblewrap (MACHINE-PROBE §1's recipe). Each container is a directory
// under the sandbox root; as root it is a tmpfs of its own (64 MB, 1,000 inodes) owned by
// an unprivileged uid derived from the container id, so the caps hold inside the kernel
// and a fork bomb meets RLIMIT_NPROC (which the kernel does not apply to uid 0). A
// program runs as
//
//   prlimit (address space, processes, file size, open files, no core)
//     → setpriv (that uid, no groups, no capabilities)
//       → bwrap (new user, pid, net, ipc, uts, cgroup namespaces; no network; the
//                system read-only; /mnt/data the container; skills read-only; a
//                private /tmp; a new session; killed with its parent)
//
// and is killed whole (its pid namespace dies with bwrap) at the time limit. The host
// side never follows a link in a container: files are opened with O_NOFOLLOW under
// directories checked with lstat, and only regular files with one link are read.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  SandboxLimitError,
  SandboxPathError,
  type ContainerFileInfo,
  type ContainerHandle,
  type RunOptions,
  type RunResult,
  type Sandbox,
  type SandboxStatus,
} from './types.ts';
import { makeDirs } from './sandbox-root.ts';

const run = promisify(execFile);

export const CONTAINER_BYTES = 64 * 1024 * 1024;
export const CONTAINER_FILES = 1000;
const DEFAULT_MEMORY = 1024 * 1024 * 1024;
const DEFAULT_OUTPUT = 64 * 1024;
/**
 * Processes one container's uid may have at once. The kernel also counts, for a moment,
 * the processes of runs that just ended, so it leaves room for a few of those.
 */
const MAX_PROCESSES = 128;
/** bwrap's words when that count is momentarily full: the run is tried again shortly. */
const FORK_REFUSED = /Can't fork for pid 1: Resource temporarily unavailable/;
const MAX_PATH_CHARS = 1024;
const MAX_DEPTH = 16;
/** Container uids: a range no system account uses. */
const UID_BASE = 200_000;
const UID_SPAN = 1_000_000;

export interface BwrapOptions {
  /** Where container directories live (AGENT_API_SANDBOX_DIR, or the one chooseSandboxRoot made). */
  root: string;
  /** Why `root` is not the configured directory, when it is not (said by status()). */
  rootNote?: string;
  /** Why no root could be used (chooseSandboxRoot's problem): nothing runs, status() says this. */
  rootProblem?: string;
  /** Default time limit of a program (AGENT_API_SANDBOX_TIMEOUT_MS). */
  timeoutMs: number;
  /** The bwrap binary (default: found on PATH). */
  bwrap?: string;
  /** A failed probe is tried again after this long (default 30 s: bubblewrap installed meanwhile, a probe cut short by load). */
  reprobeMs?: number;
}

const ID = /^[A-Za-z0-9_-]{1,200}$/;
const SKILL_NAME = /^[A-Za-z0-9._-]{1,64}$/;

const REPROBE_MS = 30_000;

export class BwrapSandbox implements Sandbox {
  private statusOnce: Promise<SandboxStatus> | undefined;
  private probedAt = 0;
  private readonly asRoot = process.getuid?.() === 0;
  /** Running programs by container, so destroy can stop them first. */
  private readonly running = new Map<string, Set<() => void>>();

  constructor(private readonly options: BwrapOptions) {}

  /** Probed once when it works; when it does not, again at most every `reprobeMs`. */
  status(): Promise<SandboxStatus> {
    const now = performance.now();
    if (!this.statusOnce || now - this.probedAt >= (this.options.reprobeMs ?? REPROBE_MS)) {
      this.probedAt = now;
      this.statusOnce = this.statusOnce ? this.statusOnce.then((s) => (s.available ? s : this.probe())) : this.probe();
    }
    return this.statusOnce;
  }

  private async probe(): Promise<SandboxStatus> {
    if (this.options.rootProblem) return { available: false, reason: this.options.rootProblem };
    const bwrap = this.options.bwrap ?? 'bwrap';
    const missing = await missingTools(bwrap, this.asRoot);
    if (missing) return { available: false, reason: missing };
    try {
      await makeDirs(this.options.root);
      const probeDir = await fsp.mkdtemp(path.join(this.options.root, '.probe-'));
      if (this.asRoot) await fsp.chown(probeDir, this.uidOf('probe'), this.uidOf('probe'));
      try {
        const { stdout } = await run(...this.command(bwrap, { id: 'probe', dataDir: probeDir }, ['/usr/bin/python3', '-I', '-S', '-c', 'print(6*7)'], {}), { timeout: 10_000 });
        if (stdout.trim() !== '42') return { available: false, reason: `the sandbox ran, but python3 printed ${JSON.stringify(stdout.slice(0, 80))}` };
      } finally {
        await fsp.rm(probeDir, { recursive: true, force: true });
      }
      return { available: true, root: this.options.root, ...(this.options.rootNote ? { note: this.options.rootNote } : {}) };
    } catch (err) {
      const stderr = String((err as { stderr?: string }).stderr || (err as Error).message).trim();
      const message =
        /Permission denied/.test(stderr) && /source path/.test(stderr)
          ? `${this.options.root} must be reachable by other users (every directory above it o+x), since programs run as an unprivileged uid`
          : stderr.slice(0, 300);
      return { available: false, reason: `the sandbox cannot run here: ${message}` };
    }
  }

  /** The uid a container's programs and files have on the host. */
  private uidOf(containerId: string): number {
    return UID_BASE + (createHash('sha256').update(containerId).digest().readUInt32BE(0) % UID_SPAN);
  }

  private dirOf(containerId: string): string {
    if (!ID.test(containerId)) throw new SandboxPathError(`not a container id: ${containerId.slice(0, 40)}`);
    return path.join(this.options.root, containerId);
  }

  async create(containerId: string): Promise<ContainerHandle> {
    const dataDir = this.dirOf(containerId);
    // The root first, searchable by the container uids whatever the umask (0711).
    await makeDirs(this.options.root);
    await fsp.mkdir(dataDir, { recursive: true, mode: 0o700 });
    if (this.asRoot && !(await isMountPoint(dataDir))) {
      const uid = this.uidOf(containerId);
      await run('mount', ['-t', 'tmpfs', '-o', `size=${CONTAINER_BYTES},nr_inodes=${CONTAINER_FILES},mode=0700,uid=${uid},gid=${uid},nosuid,nodev`, 'tmpfs', dataDir]);
    }
    return { id: containerId, dataDir };
  }

  async open(containerId: string): Promise<ContainerHandle | undefined> {
    const dataDir = this.dirOf(containerId);
    const st = await fsp.lstat(dataDir).catch(() => undefined);
    return st?.isDirectory() ? { id: containerId, dataDir } : undefined;
  }

  async localContainers(): Promise<string[]> {
    const entries = await fsp.readdir(this.options.root, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && ID.test(e.name)).map((e) => e.name);
  }

  async destroy(containerId: string): Promise<void> {
    for (const stop of this.running.get(containerId) ?? []) stop();
    const dataDir = this.dirOf(containerId);
    if (this.asRoot && (await isMountPoint(dataDir))) {
      // A program just killed may hold the mount for a moment.
      for (let i = 0; ; i++) {
        try {
          await run('umount', [dataDir]);
          break;
        } catch (err) {
          if (i >= 20) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
    await fsp.rm(dataDir, { recursive: true, force: true });
  }

  /** prlimit → setpriv → bwrap → the program. */
  private command(bwrap: string, container: ContainerHandle, argv: string[], o: { memoryBytes?: number; skills?: RunOptions['skills'] }): [string, string[]] {
    const sandbox = [
      bwrap,
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--die-with-parent',
      '--new-session',
      '--uid', '1000',
      '--gid', '1000',
      '--hostname', 'sandbox',
      '--ro-bind', '/usr', '/usr',
      '--symlink', 'usr/bin', '/bin',
      '--symlink', 'usr/lib', '/lib',
      '--symlink', 'usr/lib64', '/lib64',
      '--symlink', 'usr/sbin', '/sbin',
      '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache',
      '--ro-bind-try', '/etc/localtime', '/etc/localtime',
      '--proc', '/proc',
      '--dev', '/dev',
      '--size', String(16 * 1024 * 1024),
      '--tmpfs', '/tmp',
      '--bind', container.dataDir, '/mnt/data',
    ];
    for (const skill of o.skills ?? []) {
      if (!SKILL_NAME.test(skill.name)) throw new SandboxPathError(`not a skill name: ${skill.name.slice(0, 64)}`);
      sandbox.push('--ro-bind', skill.hostDir, `/mnt/skills/${skill.name}`);
    }
    sandbox.push(
      '--chdir', '/mnt/data',
      '--clearenv',
      '--setenv', 'PATH', '/usr/bin:/bin',
      '--setenv', 'HOME', '/mnt/data',
      '--setenv', 'LANG', 'C.UTF-8',
      '--setenv', 'PYTHONDONTWRITEBYTECODE', '1',
      '--remount-ro', '/',
      '--',
      ...argv,
    );
    const limits = [
      `--as=${o.memoryBytes ?? DEFAULT_MEMORY}`,
      `--nproc=${MAX_PROCESSES}`,
      `--fsize=${CONTAINER_BYTES}`,
      '--nofile=256',
      '--core=0',
    ];
    if (!this.asRoot) return ['prlimit', [...limits.filter((l) => !l.startsWith('--nproc')), ...sandbox]];
    const uid = String(this.uidOf(container.id));
    return ['prlimit', [...limits, 'setpriv', '--reuid', uid, '--regid', uid, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', ...sandbox]];
  }

  async run(container: ContainerHandle, o: RunOptions): Promise<RunResult> {
    const status = await this.status();
    if (!status.available) throw new Error(status.reason);
    for (let attempt = 0; ; attempt++) {
      // A caller gone before the start runs nothing (an abort listener added now would never fire).
      o.signal?.throwIfAborted();
      const result = await this.runOnce(container, o);
      if (attempt >= 10 || result.exitCode !== 1 || result.stdout !== '' || !FORK_REFUSED.test(result.stderr)) return result;
      await new Promise((r) => setTimeout(r, 20 * (attempt + 1)));
    }
  }

  private async runOnce(container: ContainerHandle, o: RunOptions): Promise<RunResult> {
    const [file, args] = this.command(this.options.bwrap ?? 'bwrap', container, o.argv, o);
    const timeoutMs = o.timeoutMs ?? this.options.timeoutMs;
    const cap = o.maxOutputBytes ?? DEFAULT_OUTPUT;
    const started = performance.now();
    return new Promise<RunResult>((resolve, reject) => {
      const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      const out = new Capped(cap);
      const err = new Capped(cap);
      let timedOut = false;
      const kill = () => child.kill('SIGKILL');
      const stops = this.running.get(container.id) ?? new Set();
      this.running.set(container.id, stops.add(kill));
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, timeoutMs);
      const onAbort = () => kill();
      o.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (b: Buffer) => out.add(b));
      child.stderr.on('data', (b: Buffer) => err.add(b));
      child.stdin.on('error', () => undefined);
      child.stdin.end(o.stdin ?? '');
      child.on('error', (e) => {
        clearTimeout(timer);
        stops.delete(kill);
        reject(e);
      });
      child.on('close', async (code, signal) => {
        clearTimeout(timer);
        stops.delete(kill);
        if (stops.size === 0) this.running.delete(container.id);
        o.signal?.removeEventListener('abort', onAbort);
        // Killed (time limit, abort): the pid namespace dies with bwrap, but should a process
        // of the container's uid outlive the teardown (a race seen under load), it is killed
        // here before the result goes back. A program that exits takes its namespace with it.
        if (this.asRoot && stops.size === 0 && code === null) await killUid(this.uidOf(container.id));
        resolve({
          stdout: out.text(),
          stderr: err.text(),
          exitCode: code,
          signal,
          timedOut,
          outputTruncated: out.truncated || err.truncated,
          durationMs: performance.now() - started,
        });
      });
    });
  }

  // --- the host's side of /mnt/data: never through a link --------------------------

  /** The path's segments, checked: relative, no '.', '..', NUL or empty segment. */
  private segments(p: string): string[] {
    const rel = p.startsWith('/mnt/data/') ? p.slice('/mnt/data/'.length) : p;
    const parts = rel.split('/');
    if (rel.length === 0 || rel.length > MAX_PATH_CHARS || parts.length > MAX_DEPTH || rel.includes('\0') || rel.startsWith('/') || parts.some((s) => s === '' || s === '.' || s === '..')) {
      throw new SandboxPathError(`not a path inside /mnt/data: ${JSON.stringify(p.slice(0, 100))}`);
    }
    return parts;
  }

  /** The directory holding the path's last segment, each parent checked to be a real directory (made when `make`). */
  private async parentDir(container: ContainerHandle, parts: string[], make: boolean): Promise<string | undefined> {
    let dir = container.dataDir;
    for (const part of parts.slice(0, -1)) {
      dir = path.join(dir, part);
      const st = await fsp.lstat(dir).catch(() => undefined);
      if (!st) {
        if (!make) return undefined;
        await fsp.mkdir(dir, { mode: 0o755 }).catch(mapLimit);
        await this.own(container, dir);
      } else if (!st.isDirectory()) return undefined;
    }
    return dir;
  }

  private async own(container: ContainerHandle, p: string): Promise<void> {
    if (this.asRoot) await fsp.lchown(p, this.uidOf(container.id), this.uidOf(container.id));
  }

  async writeFile(container: ContainerHandle, p: string, bytes: Uint8Array): Promise<ContainerFileInfo> {
    const parts = this.segments(p);
    const dir = await this.parentDir(container, parts, true);
    if (!dir) throw new SandboxPathError(`a parent of ${JSON.stringify(p)} is not a directory`);
    const target = path.join(dir, parts.at(-1)!);
    const st = await fsp.lstat(target).catch(() => undefined);
    if (st && !st.isFile()) throw new SandboxPathError(`${JSON.stringify(p)} exists and is not a regular file`);
    if (!this.asRoot) await this.checkCaps(container, bytes.byteLength - (st?.size ?? 0), st ? 0 : 1);
    // O_NOFOLLOW: a link put there by a program is refused, not written through.
    const handle = await fsp.open(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o644).catch(mapLimit);
    try {
      await handle.writeFile(bytes).catch(async (e: unknown) => {
        await fsp.rm(target, { force: true });
        throw mapLimit(e);
      });
    } finally {
      await handle.close();
    }
    await this.own(container, target);
    const after = await fsp.lstat(target);
    return { path: parts.join('/'), bytes: after.size, modifiedAt: after.mtimeMs };
  }

  /** Without a tmpfs of its own (not root), the caps are checked before each write. */
  private async checkCaps(container: ContainerHandle, moreBytes: number, moreFiles: number): Promise<void> {
    const files = await this.listFiles(container);
    const bytes = files.reduce((n, f) => n + f.bytes, 0);
    if (bytes + moreBytes > CONTAINER_BYTES) throw new SandboxLimitError(`a container holds at most ${CONTAINER_BYTES / 1024 / 1024} MB`);
    if (files.length + moreFiles > CONTAINER_FILES - 1) throw new SandboxLimitError(`a container holds at most ${CONTAINER_FILES} files`);
  }

  async readFile(container: ContainerHandle, p: string): Promise<Buffer | undefined> {
    const parts = this.segments(p);
    const dir = await this.parentDir(container, parts, false);
    if (!dir) return undefined;
    const target = path.join(dir, parts.at(-1)!);
    const handle = await fsp.open(target, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK).catch(() => undefined);
    if (!handle) return undefined;
    try {
      const st = await handle.stat();
      // A FIFO, device or directory is not a file; a second link could name a file elsewhere.
      if (!st.isFile() || st.nlink !== 1 || st.size > CONTAINER_BYTES) return undefined;
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  async listFiles(container: ContainerHandle): Promise<ContainerFileInfo[]> {
    const out: ContainerFileInfo[] = [];
    const walk = async (dir: string, prefix: string, depth: number): Promise<void> => {
      if (depth > MAX_DEPTH) return;
      const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (out.length >= CONTAINER_FILES) return;
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        const full = path.join(dir, e.name);
        if (e.isDirectory()) await walk(full, rel, depth + 1);
        else if (e.isFile()) {
          const st = await fsp.lstat(full).catch(() => undefined);
          if (st?.isFile() && st.nlink === 1) out.push({ path: rel, bytes: st.size, modifiedAt: st.mtimeMs });
        }
      }
    };
    await walk(container.dataDir, '', 0);
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }

  async removeFile(container: ContainerHandle, p: string): Promise<boolean> {
    const parts = this.segments(p);
    const dir = await this.parentDir(container, parts, false);
    if (!dir) return false;
    const target = path.join(dir, parts.at(-1)!);
    const st = await fsp.lstat(target).catch(() => undefined);
    if (!st || st.isDirectory()) return false;
    // unlink removes a link itself, never what it points to.
    await fsp.unlink(target);
    return true;
  }
}

/** Bytes kept up to a cap; the rest counted. */
class Capped {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly cap: number) {}
  add(b: Buffer): void {
    const room = this.cap - this.size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const kept = b.length > room ? b.subarray(0, room) : b;
    if (kept.length < b.length) this.truncated = true;
    this.chunks.push(kept);
    this.size += kept.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function mapLimit(e: unknown): never {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG') throw new SandboxLimitError(`a container holds at most ${CONTAINER_BYTES / 1024 / 1024} MB and ${CONTAINER_FILES} files`);
  if (code === 'ELOOP') throw new SandboxPathError('the path is a link');
  throw e;
}

/**
 * SIGKILL to every process whose real uid is `uid` (a container's own uid: nothing else
 * runs as it), again until none is left: a process mid-fork or mid-exit can outlast one
 * round. Bounded: at most 50 rounds 20 ms apart.
 */
async function killUid(uid: number): Promise<void> {
  for (let round = 0; round < 50; round++) {
    let found = 0;
    for (const pid of await fsp.readdir('/proc').catch(() => [] as string[])) {
      if (!/^\d+$/.test(pid)) continue;
      const status = await fsp.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const real = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      // A zombie is already dead (its parent reaps it).
      if (real !== String(uid) || /^State:\s+Z/m.test(status)) continue;
      found++;
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    if (found === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What runs a program, each looked up on PATH (the one in the sandbox at its fixed path). */
async function missingTools(bwrap: string, asRoot: boolean): Promise<string | undefined> {
  const found = async (name: string) => (name.includes('/') ? isExecutable(name) : (await Promise.all(searchPath().map((d) => isExecutable(path.join(d, name))))).some(Boolean));
  if (!(await found(bwrap))) return `bubblewrap (${bwrap}) is not installed: install the bubblewrap package (Debian/Ubuntu: apt-get install bubblewrap)`;
  const tools = ['prlimit', ...(asRoot ? ['setpriv', 'mount', 'umount'] : [])];
  const absent: string[] = [];
  for (const t of tools) if (!(await found(t))) absent.push(t);
  if (absent.length > 0) return `${absent.join(', ')} ${absent.length > 1 ? 'are' : 'is'} not on PATH: install util-linux and mount (Debian/Ubuntu: apt-get install util-linux mount)`;
  if (!(await isExecutable('/usr/bin/python3'))) return 'python3 is not installed at /usr/bin/python3: install it (Debian/Ubuntu: apt-get install python3)';
  return undefined;
}

const searchPath = () => (process.env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d));

const isExecutable = (file: string) =>
  fsp.access(file, fs.constants.X_OK).then(
    () => true,
    () => false,
  );

async function isMountPoint(dir: string): Promise<boolean> {
  const info = await fsp.readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const want = path.resolve(dir);
  return info.split('\n').some((line) => line.split(' ')[4] === want);
}
