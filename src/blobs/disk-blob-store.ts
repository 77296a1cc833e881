// Blobs as files under one directory (DATA_DIR/blobs by default). A put streams into a
// temp file in `.tmp/` on the same file system, counting and hashing as it goes, and is
// refused the moment it passes its cap; only a complete, flushed file is renamed into
// place (`ab/abcdef…`), so a refused or failed put leaves nothing under a key. A temp file
// is named for its instance, so a restart removes what its crashed process left at once. Keys are
// random, not content hashes: two uploads of the same bytes are two blobs, so deleting
// one file can never take another's content. Owner-only: directories 0700, files 0600
// (src/private-paths.ts), whatever the umask.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makePrivateDir, PRIVATE_DIR, PRIVATE_FILE, tighten } from '../private-paths.ts';
import { BlobNotFound, BlobTooLarge, type BlobInfo, type BlobStore, type ByteRange, type PutOptions } from './blob-store.ts';

const TMP = '.tmp';
/** Reads in 1 MiB chunks: fewer, larger writes to the socket than the 64 KiB default. */
const READ_CHUNK = 1024 * 1024;
const KEY = /^[0-9a-f]{32}$/;
/** Another instance's temp files older than this at start are a crashed process's (no upload runs this long). */
const STALE_TEMP_MS = 60 * 60_000;

export interface OpenOptions {
  /** AGENT_API_INSTANCE_ID: temp files are named for their instance, so its next start knows its own. */
  instanceId?: string;
  /** When this process started (Unix ms): this instance's temp files older than that are a previous process's. */
  processStart?: number;
  now?: number;
}

/** A file-name-safe tag for an instance id (ids may hold ':' or '/'). */
const instanceTag = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 12);

const isNotFound = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

export class DiskBlobStore implements BlobStore {
  private constructor(
    readonly dir: string,
    /** Prefix of this instance's temp files. */
    private readonly tag: string,
  ) {}

  /**
   * Creates the directory if needed and removes the temp files of uploads a crash cut off:
   * this instance's at once (its previous process is gone: instance ids differ among
   * running instances, and a file written since this process started is kept, for a second
   * store opened in the same process), another instance's, which may be writing still,
   * once an hour old.
   */
  static async open(dir: string, options: OpenOptions = {}): Promise<DiskBlobStore> {
    const now = options.now ?? Date.now();
    const started = options.processStart ?? performance.timeOrigin;
    const tag = instanceTag(options.instanceId ?? '');
    const tmp = path.join(dir, TMP);
    makePrivateDir(tmp);
    tighten(dir, PRIVATE_DIR);
    for (const name of await fs.readdir(tmp)) {
      const file = path.join(tmp, name);
      const stat = await fs.stat(file).catch(() => undefined);
      if (!stat) continue;
      const mine = name.startsWith(`${tag}-`) && stat.mtimeMs < started;
      if (mine || now - stat.mtimeMs > STALE_TEMP_MS) await fs.rm(file, { force: true, recursive: true });
    }
    return new DiskBlobStore(dir, tag);
  }

  async put(source: Readable, { maxBytes }: PutOptions): Promise<BlobInfo> {
    const key = randomBytes(16).toString('hex');
    const tmp = path.join(this.dir, TMP, `${this.tag}-${key}.part`);
    const hash = createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (bytes > maxBytes) return callback(new BlobTooLarge(maxBytes));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    // flush: the data is on disk before the rename makes it visible.
    const out = createWriteStream(tmp, { flags: 'wx', flush: true, mode: PRIVATE_FILE });
    try {
      await pipeline(source, meter, out);
      const final = this.pathOf(key);
      await fs.mkdir(path.dirname(final), { recursive: true, mode: PRIVATE_DIR });
      await fs.rename(tmp, final);
      await syncDir(path.dirname(final));
    } catch (err) {
      // The file may still be opening when the source fails: removed only once it is closed,
      // or the open would create it again after the removal.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return { key, bytes, sha256: hash.digest('hex') };
  }

  async get(key: string, range: ByteRange = {}): Promise<Readable> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(key), 'r');
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFound(key);
      throw err;
    }
    // Opened first, so a missing blob is an error here rather than on the stream.
    return handle.createReadStream({ highWaterMark: READ_CHUNK, ...(range.start !== undefined ? { start: range.start } : {}), ...(range.end !== undefined ? { end: range.end } : {}) });
  }

  async stat(key: string): Promise<{ bytes: number } | undefined> {
    try {
      return { bytes: (await fs.stat(this.pathOf(key))).size };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  private pathOf(key: string): string {
    // Keys come from rows; one that is not ours must never become a path elsewhere.
    if (!KEY.test(key)) throw new Error(`not a blob key: ${JSON.stringify(key.slice(0, 40))}`);
    return path.join(this.dir, key.slice(0, 2), key);
  }
}

/** Makes a rename durable; file systems that cannot sync a directory are left as they are. */
async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // EINVAL/EISDIR on some file systems: the rename itself is still atomic.
  } finally {
    await handle.close();
  }
}
