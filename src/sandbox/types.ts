// The sandbox as the rest of the service sees it (DESIGN "sandbox/"): containers are
// directories on this host, each mounted at /mnt/data inside a bubblewrap sandbox with
// no network, the system read-only, skills read-only at /mnt/skills/<name>, and limits
// on memory, processes, time, output, bytes and files. It knows no endpoint, account or
// database: the API families keep the rows and call this with ids.

export interface SandboxStatus {
  available: boolean;
  /** Why code cannot run here (bwrap missing or refused): said in the 503, the start-up summary and /readyz. */
  reason?: string;
  /** Where container directories live on this host (start-up summary). */
  root?: string;
  /** Why `root` is not the configured directory, when it is not (start-up summary). */
  note?: string;
}

/** A container's files on this host. */
export interface ContainerHandle {
  readonly id: string;
  /** The host directory mounted at /mnt/data (capped: 64 MB, 1,000 files). */
  readonly dataDir: string;
}

/** A skill version's files on this host, mounted read-only at /mnt/skills/<name>. */
export interface SkillMount {
  /** A single path segment ([A-Za-z0-9._-]). */
  name: string;
  hostDir: string;
}

export interface RunOptions {
  /** The program and its arguments, run inside the sandbox (e.g. ['/usr/bin/python3', '-I', '-S', '-c', code]). */
  argv: string[];
  stdin?: string;
  /** Default 30 s (AGENT_API_SANDBOX_TIMEOUT_MS); the whole process tree is killed at it. */
  timeoutMs?: number;
  /** Default 1 GiB (SPEC: memory_limit 1g). */
  memoryBytes?: number;
  skills?: SkillMount[];
  /** stdout and stderr are each kept up to this many bytes (default 64 KiB); the rest is counted, not kept. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  /** null when the program was killed (timeout, signal). */
  exitCode: number | null;
  /** The signal that ended it, if one did. */
  signal: string | null;
  timedOut: boolean;
  outputTruncated: boolean;
  durationMs: number;
}

/** A file in a container's /mnt/data, as the host sees it (regular files only: links are never followed). */
export interface ContainerFileInfo {
  /** Relative to /mnt/data, '/'-separated. */
  path: string;
  bytes: number;
  modifiedAt: number;
}

export interface Sandbox {
  status(): Promise<SandboxStatus>;
  /** Makes the container's capped /mnt/data (idempotent). */
  create(containerId: string): Promise<ContainerHandle>;
  /** The container's directory if it exists on this host. */
  open(containerId: string): Promise<ContainerHandle | undefined>;
  run(container: ContainerHandle, options: RunOptions): Promise<RunResult>;
  /** Removes the container's files (unmounts its capped mount). */
  destroy(containerId: string): Promise<void>;
  /** The ids of the containers that have a directory on this host. */
  localContainers(): Promise<string[]>;
  /** Writes a file at /mnt/data/<path> (refused past the caps: SandboxLimitError). */
  writeFile(container: ContainerHandle, path: string, bytes: Uint8Array): Promise<ContainerFileInfo>;
  /** The file's bytes; undefined when it is missing, a link, or not a regular file. */
  readFile(container: ContainerHandle, path: string): Promise<Buffer | undefined>;
  listFiles(container: ContainerHandle): Promise<ContainerFileInfo[]>;
  removeFile(container: ContainerHandle, path: string): Promise<boolean>;
}

/** Past a container's byte or file cap. */
export class SandboxLimitError extends Error {
  override name = 'SandboxLimitError';
}

/** A path that is not a plain relative path inside /mnt/data (absolute, `..`, NUL, too long). */
export class SandboxPathError extends Error {
  override name = 'SandboxPathError';
}

/**
 * Skill versions are written for mounting under `<sandbox root>/.skills`: beside the
 * containers (so reachable by their uids), never a container id (ids hold no dot).
 */
export const SKILLS_SUBDIR = '.skills';
