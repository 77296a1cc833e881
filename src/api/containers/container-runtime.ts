// Containers in use: what the container endpoints and the hosted tools of /responses
// (code_interpreter, shell) share. A container is made here (its row, its capped
// directory, its copied files, its skills pinned to a version), found for a caller (the
// account's, not expired, touched), and runs programs with its skills mounted read-only;
// after a run, the files a program wrote are brought into the rows and returned, so an
// answer can cite them and the caller can download them. Refusals are 4xx naming the
// caller's own field (`file_ids[2]`, `tools[0].container`); a host where the sandbox
// cannot run is a 503 saying why.
import path from 'node:path';
import { insufficientQuota, invalidRequest, notFound, serviceUnavailable } from '../../errors.ts';
import { SandboxLimitError, SandboxPathError, type ContainerFileInfo, type ContainerHandle, type RunOptions, type RunResult, type Sandbox, type SkillMount } from '../../sandbox/types.ts';
import type { ContainerFilesTable, ContainersTable } from '../../store/schema.ts';
import type { StoredFiles } from '../files/stored-files.ts';
import type { SkillMounts } from '../skills/skill-mounts.ts';
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

export interface WrittenFile {
  file_id: string;
  container_id: string;
  /** /mnt/data/<path> */
  path: string;
  filename: string;
  bytes: number;
}

export interface ContainerRuntimeDeps {
  containers: Containers;
  /** undefined: code execution is not set up on this server (every use answers 503). */
  sandbox: Sandbox | undefined;
  noSandboxReason?: string;
  files: StoredFiles;
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

  constructor(private readonly deps: ContainerRuntimeDeps) {
    this.containers = deps.containers;
  }

  /** The sandbox, if code can run on this host; 503 saying why not. */
  async sandbox(): Promise<Sandbox> {
    const unavailable = (reason: string) => serviceUnavailable(`Code execution is not available on this server: ${reason}`);
    if (!this.deps.sandbox) throw unavailable(this.deps.noSandboxReason ?? 'no sandbox is configured.');
    const status = await this.deps.sandbox.status();
    if (!status.available) throw unavailable(status.reason ?? 'the sandbox cannot run.');
    return this.deps.sandbox;
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

  /**
   * The container's directory on this host. A running container whose directory is
   * missing (the host's data directory was cleared) gets an empty one.
   */
  async handle(id: string): Promise<ContainerHandle> {
    const sandbox = await this.sandbox();
    return (await sandbox.open(id)) ?? sandbox.create(id);
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
    const handle = await this.handle(row.id);
    for (const f of files) {
      if (keep) {
        const meta = await this.deps.files.get(row.account_id, f.id);
        if (meta && (await this.containers.fileRows(row.id, [DATA_ROOT + meta.filename])).length > 0) continue;
      }
      const { name, content } = await this.uploaded(row.account_id, f.id, f.param);
      await this.containers.addFile(row, await this.place(handle, name, content, f.param));
    }
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
      await sandbox.create(row.id);
      await this.copyIn(row, files);
    } catch (err) {
      await sandbox.destroy(row.id).catch(() => undefined);
      await this.containers.delete(accountId, row.id);
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
   * Runs a program in the container (its skills mounted) and brings the rows in step
   * with /mnt/data: `written` holds the files the program created or changed.
   */
  async run(row: ContainersTable, options: Omit<RunOptions, 'skills'>): Promise<{ result: RunResult; written: WrittenFile[] }> {
    const sandbox = await this.sandbox();
    // A long response touches its container at every run, so it cannot expire in use; one
    // deleted or expired meanwhile is not brought back (its directory is made only after this).
    if (!(await this.containers.touch(row.id))) throw invalidRequest(`Container ${row.id} has expired or was deleted; create a new one.`, null);
    const handle = await this.handle(row.id);
    const before = new Map((await sandbox.listFiles(handle)).map((f) => [f.path, f]));
    const result = await sandbox.run(handle, { ...options, skills: await this.mounts(row) });
    const after = await sandbox.listFiles(handle);
    await this.containers.syncFiles(row, after);
    const changed = after.filter((f) => {
      const was = before.get(f.path);
      return !was || was.bytes !== f.bytes || was.modifiedAt !== f.modifiedAt;
    });
    const rows = await this.containers.fileRows(row.id, changed.map((f) => DATA_ROOT + f.path));
    const written = rows.map((r: ContainerFilesTable) => ({
      file_id: r.id,
      container_id: row.id,
      path: r.path,
      filename: r.path.slice(r.path.lastIndexOf('/') + 1),
      bytes: Number(r.bytes),
    }));
    return { result, written };
  }
}
