// A Sandbox for the API tests: containers are plain directories under a temp directory,
// files really written, read, listed and removed on disk under the same caps and path
// rules as the real one; run() runs nothing and answers a canned result. Only for tests:
// it isolates nothing.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  SandboxLimitError,
  SandboxPathError,
  type ContainerFileInfo,
  type ContainerHandle,
  type RunOptions,
  type RunResult,
  type Sandbox,
  type SandboxStatus,
} from '../../sandbox/types.ts';

export interface FakeSandboxOptions {
  maxBytes?: number;
  maxFiles?: number;
  status?: SandboxStatus;
  runResult?: RunResult;
}

export class FakeSandbox implements Sandbox {
  readonly runs: { containerId: string; options: RunOptions }[] = [];
  /** What status() answers (a test may change it). */
  currentStatus: SandboxStatus;
  /** The caps writeFile enforces (a test may lower them). */
  maxBytes: number;
  maxFiles: number;

  private constructor(
    readonly root: string,
    private readonly options: FakeSandboxOptions,
  ) {
    this.currentStatus = options.status ?? { available: true };
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.maxFiles = options.maxFiles ?? 1_000;
  }

  static async create(options: FakeSandboxOptions = {}): Promise<FakeSandbox> {
    return new FakeSandbox(await fs.mkdtemp(path.join(os.tmpdir(), 'agent-api-fake-sandbox-')), options);
  }

  async close(): Promise<void> {
    await fs.rm(this.root, { recursive: true, force: true });
  }

  async status(): Promise<SandboxStatus> {
    return this.currentStatus;
  }

  private dirOf(containerId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(containerId)) throw new SandboxPathError(`bad container id ${containerId}`);
    return path.join(this.root, containerId);
  }

  async localContainers(): Promise<string[]> {
    const entries = await fs.readdir(this.root, { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isDirectory() && /^[A-Za-z0-9_-]+$/.test(e.name)).map((e) => e.name);
  }

  async create(containerId: string): Promise<ContainerHandle> {
    const dataDir = this.dirOf(containerId);
    await fs.mkdir(dataDir, { recursive: true });
    return { id: containerId, dataDir };
  }

  async open(containerId: string): Promise<ContainerHandle | undefined> {
    const dataDir = this.dirOf(containerId);
    const st = await fs.stat(dataDir).catch(() => undefined);
    return st?.isDirectory() ? { id: containerId, dataDir } : undefined;
  }

  async run(container: ContainerHandle, options: RunOptions): Promise<RunResult> {
    this.runs.push({ containerId: container.id, options });
    return this.options.runResult ?? { stdout: '', stderr: '', exitCode: 0, signal: null, timedOut: false, outputTruncated: false, durationMs: 1 };
  }

  async destroy(containerId: string): Promise<void> {
    await fs.rm(this.dirOf(containerId), { recursive: true, force: true });
  }

  private resolve(container: ContainerHandle, rel: string): string {
    const parts = rel.split('/');
    if (rel === '' || rel.includes('\0') || rel.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..') || rel.length > 1024) {
      throw new SandboxPathError(`'${rel}' is not a plain relative path inside /mnt/data`);
    }
    return path.join(container.dataDir, ...parts);
  }

  async writeFile(container: ContainerHandle, rel: string, bytes: Uint8Array): Promise<ContainerFileInfo> {
    const target = this.resolve(container, rel);
    const existing = await this.listFiles(container);
    const replaced = existing.find((f) => f.path === rel);
    const used = existing.reduce((n, f) => n + f.bytes, 0) - (replaced?.bytes ?? 0);
    if (!replaced && existing.length + 1 > this.maxFiles) throw new SandboxLimitError(`at most ${this.maxFiles} files`);
    if (used + bytes.length > this.maxBytes) throw new SandboxLimitError(`at most ${this.maxBytes} bytes`);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.writeFile(target, bytes);
    const st = await fs.stat(target);
    return { path: rel, bytes: st.size, modifiedAt: st.mtimeMs };
  }

  async readFile(container: ContainerHandle, rel: string): Promise<Buffer | undefined> {
    const target = this.resolve(container, rel);
    const st = await fs.lstat(target).catch(() => undefined);
    if (!st?.isFile()) return undefined;
    return fs.readFile(target);
  }

  async listFiles(container: ContainerHandle): Promise<ContainerFileInfo[]> {
    const out: ContainerFileInfo[] = [];
    const walk = async (dir: string, prefix: string) => {
      for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const rel = prefix + entry.name;
        if (entry.isDirectory()) await walk(path.join(dir, entry.name), rel + '/');
        else if (entry.isFile()) {
          const st = await fs.lstat(path.join(dir, entry.name));
          out.push({ path: rel, bytes: st.size, modifiedAt: st.mtimeMs });
        }
      }
    };
    await walk(container.dataDir, '');
    return out;
  }

  async removeFile(container: ContainerHandle, rel: string): Promise<boolean> {
    const target = this.resolve(container, rel);
    const st = await fs.lstat(target).catch(() => undefined);
    if (!st || st.isDirectory()) return false;
    await fs.rm(target);
    return true;
  }
}
