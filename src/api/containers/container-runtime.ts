// Containers in use: what the container endpoints and the hosted tools of /responses
// (code_interpreter, shell) share. A container is made here (its row, its capped
// directory, its copied files, its skills pinned to a version), found for a caller (the
// account's, not expired, touched), and runs programs with its skills mounted read-only;
// after a run, the files a program wrote are brought into the rows and returned, so an
// answer can cite them and the caller can download them. Refusals are 4xx naming the
// caller's own field (`file_ids[2]`, `tools[0].container`); a host where the sandbox
// cannot run is a 503 saying why.
import path from 'node:path';
import { Readable } from 'node:stream';
import type { BlobStore } from '../../blobs/blob-store.ts';
import { insufficientQuota, invalidRequest, notFound, serviceUnavailable } from '../../errors.ts';
import { SandboxLimitError, SandboxPathError, type ContainerFileInfo, type ContainerHandle, type RunOptions, type RunResult, type Sandbox, type SandboxStatus, type SkillMount } from '../../sandbox/types.ts';
import type { ContainerFilesTable, ContainersTable } from '../../store/schema.ts';
import type { StoredFiles } from '../files/stored-files.ts';
import type { SkillMounts } from '../skills/skill-mounts.ts';
import type { WrittenFile } from '../../tools/containers/container-tool.ts';
import { DATA_ROOT, type Containers } from './containers-store.ts';

/** SPEC "Limits": a container holds at most 64 MB (so no uploaded file larger can be copied in). */
export const CONTAINER_BYTES = 64 * 1024 * 1024;
export const DEFAULT_EXPIRY_MINUTES = 20;
const CAPS = 'a container holds at most 64 MB and 1,000 files';

/** A skill a container mounts, as its row keeps it: pinned to the version resolved at create. */
export interface PinnedSkill {
  skill_id: string;
  version: string;
  name: string;
}

export interface SkillRef {
  skill_id: string;
  version?: string | undefined;
}

export interface NewContainer {
  name: string;
  expiresAfterMinutes?: number;
  /** Uploaded files copied into /mnt/data, each with the field that named it. */
  files?: { id: string; param: string }[];
  skills?: { ref: SkillRef; param: string }[];
  /** An id chosen beforehand (a response names its auto container before it runs). */
  id?: string;
}

export interface ContainerRuntimeDeps {
  containers: Containers;
  /** undefined: code execution is not set up on this server (every use answers 503). */
  sandbox: Sandbox | undefined;
  noSandboxReason?: string;
  files: StoredFiles;
  /** Where each container file's bytes are kept too, so any instance can rebuild /mnt/data. */
  blobs: BlobStore;
  /** Without it, skills cannot be mounted (a create naming one is refused). */
  skillMounts?: SkillMounts;
  /** Where skill versions are written for mounting (reachable by the sandbox's uids). */
  skillsDir: string;
  /** Running containers an account may have at once (AGENT_API_CONTAINERS_PER_ACCOUNT). */
  perAccount: number;
}

/** A file name placed at /mnt/data/<name>: one plain path segment. */
export function plainFileName(name: string, param: string): string {
  // eslint-disable-next-line no-control-regex
  const bad = name === '' || name === '.' || name === '..' || name.includes('/') || /[\x00-\x1f\x7f]/.test(name) || Buffer.byteLength(name) > 255;
  if (bad) {
    throw invalidRequest(
      `The file name ${JSON.stringify(name.slice(0, 300))} cannot be placed at /mnt/data/<name>: it must be one path segment of 1 to 255 bytes, without '/', control characters, '.' or '..'.`,
      param,
    );
  }
  return name;
}

const pinnedSkills = (row: ContainersTable): PinnedSkill[] => (row.skills ? (JSON.parse(row.skills) as PinnedSkill[]) : []);

export class ContainerRuntime {
  readonly containers: Containers;
  /** The files_version each container's directory on this host holds (absent: unknown, rebuilt at next use). */
  private readonly versions = new Map<string, number>();

  constructor(private readonly deps: ContainerRuntimeDeps) {
    this.containers = deps.containers;
  }

  /** The sandbox, if code can run on this host; 503 saying why not. */
  async sandbox(): Promise<Sandbox> {
    const status = await this.status();
    if (!status.available || !this.deps.sandbox) throw serviceUnavailable(`Code execution is not available on this server: ${status.reason ?? 'the sandbox cannot run.'}`);
    return this.deps.sandbox;
  }

  /** Whether code can run on this host, where containers live, or why not (the start-up summary, /readyz). */
  async status(): Promise<SandboxStatus> {
    if (!this.deps.sandbox) return { available: false, reason: this.deps.noSandboxReason ?? 'no sandbox is configured.' };
    return this.deps.sandbox.status();
  }

  /** The account's container, not expired, touched (its idle expiry starts again); 404 / 400 otherwise. */
  async usable(accountId: string, id: string, param = 'container_id'): Promise<ContainersTable> {
    const row = await this.containers.row(accountId, id);
    if (!row) throw notFound(`No container found with id '${id}'.`, param);
    if (this.containers.isExpired(row) || !(await this.containers.touch(id))) {
      throw invalidRequest(`Container ${id} has expired; create a new one.`, param);
    }
    return row;
  }

  /** Per container on this host: one change to its directory or rows at a time. */
  private readonly locks = new Map<string, Promise<unknown>>();

  /**
   * Runs `fn` after every earlier change to the container on this host (a rebuild, an add,
   * a commit) has ended, so two of them never interleave; programs themselves run outside it.
   */
  private exclusive<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.locks.get(id) ?? Promise.resolve()).then(fn, fn);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(id, tail);
    void tail.then(() => {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    });
    return next;
  }

  /**
   * The container's directory on this host, holding its current files: made, or rebuilt
   * from the blob store when this host's copy is of an older files_version (another
   * instance changed the files, or this process restarted). Called under `exclusive`.
   */
  private async localCopy(row: ContainersTable): Promise<ContainerHandle> {
    const sandbox = await this.sandbox();
    // The version now (the row may have been read before another change).
    const version = Number((await this.containers.byId(row.id))?.files_version ?? row.files_version);
    const existing = await sandbox.open(row.id);
    if (existing && this.versions.get(row.id) === version) return existing;
    const handle = existing ?? (await sandbox.create(row.id));
    const rows = await this.containers.filesOf(row.id);
    const named = new Set(rows.map((r) => r.path));
    for (const f of await sandbox.listFiles(handle)) if (!named.has(DATA_ROOT + f.path)) await sandbox.removeFile(handle, f.path);
    for (const r of rows) {
      // A row without a blob (from before blobs were kept) has its bytes on the host that wrote it only.
      if (!r.blob_key) continue;
      await sandbox.writeFile(handle, r.path.slice(DATA_ROOT.length), await this.blobBytes(r.blob_key));
    }
    this.versions.set(row.id, version);
    return handle;
  }

  private async blobBytes(key: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.deps.blobs.get(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /**
   * Brings the rows and blobs in step with the directory after a change on this host:
   * each new or changed file (against `before`, the rows, or `user` naming it) is put in
   * the blob store and its row written; each vanished file's row and blob go; the
   * container's files_version moves on. Returns the files written.
   */
  private async commit(row: ContainersTable, handle: ContainerHandle, before?: ReadonlyMap<string, ContainerFileInfo>, user?: ReadonlySet<string>): Promise<WrittenFile[]> {
    const sandbox = await this.sandbox();
    const after = await sandbox.listFiles(handle);
    const rows = await this.containers.filesOf(row.id);
    const byPath = new Map(rows.map((r) => [r.path, r]));
    const changed = after.filter((f) => {
      const kept = byPath.get(DATA_ROOT + f.path);
      if (!kept || kept.blob_key === null || Number(kept.bytes) !== f.bytes || user?.has(f.path)) return true;
      const was = before?.get(f.path);
      return was !== undefined && (was.bytes !== f.bytes || was.modifiedAt !== f.modifiedAt);
    });
    const present = new Set(after.map((f) => DATA_ROOT + f.path));
    const removed = rows.filter((r) => !present.has(r.path));
    const stale: string[] = [];
    const written: WrittenFile[] = [];
    for (const f of changed) {
      const bytes = await sandbox.readFile(handle, f.path);
      if (!bytes) continue;
      const blob = await this.deps.blobs.put(Readable.from([bytes]), { maxBytes: CONTAINER_BYTES });
      const kept = byPath.get(DATA_ROOT + f.path);
      // Added through the API: a new file object; changed by a program: the same one.
      const fresh = user?.has(f.path) || !kept;
      const fileRow = this.containers.newFileRow(row, DATA_ROOT + f.path, bytes.length, user?.has(f.path) ? 'user' : (kept?.source ?? 'assistant'), blob.key, fresh ? undefined : kept!.id);
      let old: string | null;
      try {
        old = await this.containers.putFile(fileRow);
      } catch (err) {
        // No row names it (the container was deleted meanwhile): the blob goes too.
        await this.deps.blobs.delete(blob.key).catch(() => undefined);
        throw err;
      }
      if (old) stale.push(old);
      written.push({ file_id: fileRow.id, container_id: row.id, path: fileRow.path, filename: fileRow.path.slice(fileRow.path.lastIndexOf('/') + 1), bytes: bytes.length });
    }
    stale.push(...(await this.containers.removeFileRows(removed.map((r) => r.id))));
    await Promise.all(stale.map((k) => this.deps.blobs.delete(k).catch(() => undefined)));
    if (changed.length > 0 || removed.length > 0) {
      const now = await this.containers.bumpFilesVersion(row.id);
      // This host holds the new version only if no other instance changed the files meanwhile.
      if (this.versions.get(row.id) === now - 1) this.versions.set(row.id, now);
      else this.versions.delete(row.id);
    }
    return written.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Adds a file at /mnt/data/<name> (an uploaded or copied one): its row, as the API shows it. */
  async addFile(row: ContainersTable, name: string, bytes: Uint8Array, param: string): Promise<ContainerFilesTable> {
    const { placed, written } = await this.exclusive(row.id, async () => {
      const handle = await this.localCopy(row);
      const placed = await this.place(handle, name, bytes, param);
      return { placed, written: await this.commit(row, handle, undefined, new Set([placed.path])) };
    });
    const mine = written.find((w) => w.path === DATA_ROOT + placed.path);
    // The row this add wrote (another add of the name at once may have taken the path over since).
    if (mine) return { ...this.containers.newFileRow(row, mine.path, mine.bytes, 'user', null, mine.file_id) };
    const [added] = await this.containers.fileRows(row.id, [DATA_ROOT + placed.path]);
    if (!added) throw invalidRequest(`The file '${name}' was removed while it was added.`, param);
    return added;
  }

  /** The container's file rows brought in step with this host's copy when it is the current one (a program's files since). */
  async refresh(row: ContainersTable): Promise<void> {
    const sandbox = await this.sandbox();
    await this.exclusive(row.id, async () => {
      const handle = await sandbox.open(row.id);
      const version = Number((await this.containers.byId(row.id))?.files_version ?? -1);
      if (handle && this.versions.get(row.id) === version) await this.commit(row, handle);
    });
  }

  /** Removes a file from /mnt/data, its row and its blob. */
  async removeFile(row: ContainersTable, file: ContainerFilesTable): Promise<void> {
    const sandbox = await this.sandbox();
    await this.exclusive(row.id, async () => {
      const handle = await this.localCopy(row);
      await sandbox.removeFile(handle, file.path.slice(DATA_ROOT.length));
      await this.commit(row, handle);
    });
    // A file whose bytes were never on this host (no blob) still loses its row.
    await this.containers.removeFileRows([file.id]);
  }

  /** A file's bytes: from the blob store (any instance), else this host's copy; undefined when gone. */
  async readFile(row: ContainersTable, file: ContainerFilesTable): Promise<Buffer | undefined> {
    if (file.blob_key) return this.blobBytes(file.blob_key).catch(() => undefined);
    const sandbox = await this.sandbox();
    const handle = await sandbox.open(row.id);
    return handle ? sandbox.readFile(handle, file.path.slice(DATA_ROOT.length)) : undefined;
  }

  /** A container's files gone from this host and the blob store (its rows already deleted). */
  private async removeFiles(containerId: string, blobKeys: readonly string[]): Promise<void> {
    // The blobs first: their rows are gone, so nothing else would remove them; a directory
    // left by a failed destroy is removed by this host's sweepLocal later.
    await Promise.all(blobKeys.map((k) => this.deps.blobs.delete(k).catch(() => undefined)));
    this.versions.delete(containerId);
    await (await this.sandbox()).destroy(containerId);
  }

  /** Deletes the account's container: its rows, then its files everywhere; false when it has none such. */
  async delete(accountId: string, id: string): Promise<boolean> {
    if (!(await this.containers.row(accountId, id))) return false;
    const keys = await this.containers.delete(accountId, id);
    if (keys === false) return false;
    await this.removeFiles(id, keys);
    return true;
  }

  /** The expiry sweep (one instance at a time): idle containers' files removed everywhere. */
  expire(log?: { warn(obj: object, msg?: string): void }): Promise<number> {
    return this.containers.expire((id, keys) => this.removeFiles(id, keys), log);
  }

  /**
   * This host's copies of containers that are gone or expired (another instance deleted
   * or expired them) are removed: each may hold 64 MB of memory. Every instance runs it.
   */
  async sweepLocal(): Promise<number> {
    if (!this.deps.sandbox || !(await this.deps.sandbox.status()).available) return 0;
    let removed = 0;
    for (const id of await this.deps.sandbox.localContainers()) {
      const row = await this.containers.byId(id);
      if (row && !this.containers.isExpired(row)) continue;
      await this.deps.sandbox.destroy(id);
      this.versions.delete(id);
      removed++;
    }
    return removed;
  }

  /** Runs sweepLocal every `everyMs` until the returned function is called. */
  startLocalSweep(everyMs: number, log?: { warn(obj: object, msg?: string): void }): () => void {
    const timer = setInterval(() => {
      this.sweepLocal().catch((err: unknown) => log?.warn({ err }, "this host's copies of gone containers could not be removed"));
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * Checks, before anything is made, that every file id names one of the account's
   * files, each placeable at /mnt/data/<name> and all of them within the container's bytes.
   */
  async checkFiles(accountId: string, files: readonly { id: string; param: string }[]): Promise<void> {
    let total = 0;
    for (const f of files) {
      const file = await this.deps.files.get(accountId, f.id);
      if (!file) throw invalidRequest(`No file found with id '${f.id}'.`, f.param);
      plainFileName(file.filename, f.param);
      total += file.bytes;
      if (total > CONTAINER_BYTES) throw invalidRequest(`The files do not fit in a container: ${CAPS}.`, f.param);
    }
  }

  /** Copies uploaded files into /mnt/data; with `keep`, a file whose name is there already stays as it is. */
  async copyIn(row: ContainersTable, files: readonly { id: string; param: string }[], keep = false): Promise<void> {
    if (files.length === 0) return;
    await this.exclusive(row.id, () => this.copyInLocked(row, files, keep));
  }

  private async copyInLocked(row: ContainersTable, files: readonly { id: string; param: string }[], keep: boolean): Promise<void> {
    const handle = await this.localCopy(row);
    const placed = new Set<string>();
    for (const f of files) {
      if (keep) {
        const meta = await this.deps.files.get(row.account_id, f.id);
        if (meta && (await this.containers.fileRows(row.id, [DATA_ROOT + meta.filename])).length > 0) continue;
      }
      const { name, content } = await this.uploaded(row.account_id, f.id, f.param);
      placed.add((await this.place(handle, name, content, f.param)).path);
    }
    if (placed.size > 0) await this.commit(row, handle, undefined, placed);
  }

  /** An uploaded file of the account, its name checked, its bytes read (up to the container's cap). */
  async uploaded(accountId: string, fileId: string, param: string): Promise<{ name: string; content: Buffer }> {
    const read = await this.deps.files.read(accountId, fileId, CONTAINER_BYTES);
    if (read === undefined) throw invalidRequest(`No file found with id '${fileId}'.`, param);
    if (read === 'too_large') throw invalidRequest(`The file '${fileId}' is too large to copy into a container: ${CAPS}.`, param);
    return { name: plainFileName(read.file.filename, param), content: read.content };
  }

  /** Writes a file into /mnt/data, turning the sandbox's refusals into 400s naming `param`. */
  async place(handle: ContainerHandle, name: string, bytes: Uint8Array, param: string): Promise<ContainerFileInfo> {
    const sandbox = await this.sandbox();
    try {
      return await sandbox.writeFile(handle, name, bytes);
    } catch (err) {
      if (err instanceof SandboxLimitError) throw invalidRequest(`The container cannot take '${name}': ${CAPS} (${err.message}).`, param);
      if (err instanceof SandboxPathError) throw invalidRequest(`The file name '${name}' cannot be used in a container: ${err.message}.`, param);
      throw err;
    }
  }

  /**
   * The skills' versions, pinned: `latest` and the default resolve now, so a container
   * keeps mounting what it was made with. Two skills with one name cannot share
   * /mnt/skills/<name>. Nothing is written.
   */
  async checkSkills(accountId: string, skills: readonly { ref: SkillRef; param: string }[]): Promise<PinnedSkill[]> {
    if (skills.length === 0) return [];
    if (!this.deps.skillMounts) throw invalidRequest('Skills cannot be mounted on this server.', skills[0]!.param);
    const pinned: PinnedSkill[] = [];
    const names = new Map<string, string>();
    for (const { ref, param } of skills) {
      const found = await this.deps.skillMounts.resolve(accountId, ref.skill_id, ref.version);
      if (!found) {
        throw ref.version === undefined || ref.version === 'latest'
          ? invalidRequest(`No skill found with id '${ref.skill_id}'.`, `${param}.skill_id`)
          : invalidRequest(`Skill '${ref.skill_id}' has no version '${ref.version}'.`, `${param}.version`);
      }
      const other = names.get(found.name);
      if (other !== undefined) throw invalidRequest(`Two skills are named '${found.name}' (${other} and ${ref.skill_id}): each mounts at /mnt/skills/<name>.`, param);
      names.set(found.name, ref.skill_id);
      pinned.push({ skill_id: ref.skill_id, version: found.version, name: found.name });
    }
    return pinned;
  }

  /** The skills a container was made with. */
  pinned(row: ContainersTable): PinnedSkill[] {
    return pinnedSkills(row);
  }

  /** Makes a container: its skills pinned, its row, its directory, its files; nothing is left half-made. */
  async create(accountId: string, input: NewContainer): Promise<ContainersTable> {
    const sandbox = await this.sandbox();
    // Each container may hold 64 MB of memory, so an account's are bounded (concurrent creates may pass it by one each).
    const running = await this.containers.countRunning(accountId);
    if (running >= this.deps.perAccount) {
      throw insufficientQuota(`This account has ${running} running containers, the most it may have: delete one (DELETE /v1/containers/{container_id}) or let one expire.`);
    }
    const files = input.files ?? [];
    await this.checkFiles(accountId, files);
    const skills = await this.checkSkills(accountId, input.skills ?? []);
    // Written out now, so a run never waits for it (and a broken version fails the create, not a run).
    for (const s of skills) await this.deps.skillMounts!.materialize(accountId, s.skill_id, s.version, this.deps.skillsDir);
    const row = await this.containers.create(accountId, {
      name: input.name,
      expiresAfterMinutes: input.expiresAfterMinutes ?? DEFAULT_EXPIRY_MINUTES,
      skills,
      ...(input.id ? { id: input.id } : {}),
    });
    try {
      await this.exclusive(row.id, async () => {
        await this.localCopy(row);
        if (files.length > 0) await this.copyInLocked(row, files, false);
      });
    } catch (err) {
      // Nothing half-made is left: no directory, no rows, no blobs.
      const keys = await this.containers.delete(accountId, row.id);
      await this.removeFiles(row.id, keys || []).catch(() => undefined);
      throw err;
    }
    return row;
  }

  /** The container's skills as mounts; a skill or version deleted since is no longer mounted. */
  private async mounts(row: ContainersTable): Promise<SkillMount[]> {
    const out: SkillMount[] = [];
    if (!this.deps.skillMounts) return out;
    for (const s of pinnedSkills(row)) {
      const mount = await this.deps.skillMounts.materialize(row.account_id, s.skill_id, s.version, this.deps.skillsDir);
      if (mount) out.push(mount);
    }
    return out;
  }

  /**
   * Runs a program in the container (its skills mounted) and keeps what it changed in
   * /mnt/data (rows, blobs): `written` holds the files it created or changed.
   */
  async run(row: ContainersTable, options: Omit<RunOptions, 'skills'>): Promise<{ result: RunResult; written: WrittenFile[] }> {
    const sandbox = await this.sandbox();
    // A long response touches its container at every run, so it cannot expire in use; one
    // deleted or expired meanwhile is not brought back (its directory is made only after this).
    if (!(await this.containers.touch(row.id))) throw invalidRequest(`Container ${row.id} has expired or was deleted; create a new one.`, null);
    const { handle, before } = await this.exclusive(row.id, async () => {
      const handle = await this.localCopy(row);
      return { handle, before: new Map((await sandbox.listFiles(handle)).map((f) => [f.path, f])) };
    });
    const result = await sandbox.run(handle, { ...options, skills: await this.mounts(row) });
    return { result, written: await this.exclusive(row.id, () => this.commit(row, handle, before)) };
  }
}
