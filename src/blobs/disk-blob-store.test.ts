// The disk blob store: whole blobs or none, caps enforced while streaming, ranges,
// delete, and temp files of a crashed process swept at open (this instance's at once,
// another instance's once an hour old).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { BlobNotFound, BlobTooLarge } from './blob-store.ts';
import { DiskBlobStore } from './disk-blob-store.ts';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-blobs-'));

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every file under dir, relative, the temp directory included. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

/** A stream of `total` random bytes in chunks of `chunk`. */
function randomStream(total: number, chunk = 64 * 1024): { stream: Readable; content: Buffer } {
  const content = randomBytes(total);
  const parts: Buffer[] = [];
  for (let i = 0; i < total; i += chunk) parts.push(content.subarray(i, i + chunk));
  return { stream: Readable.from(parts), content };
}

test('put stores the stream whole with its size and sha256; get returns it byte for byte, and ranges of it', async () => {
  const dir = tempDir();
  try {
    const store = await DiskBlobStore.open(dir);
    const { stream, content } = randomStream(300_000);
    const blob = await store.put(stream, { maxBytes: 300_000 });
    assert.equal(blob.bytes, 300_000);
    assert.equal(blob.sha256, createHash('sha256').update(content).digest('hex'));
    assert.deepEqual(await bytesOf(await store.get(blob.key)), content);
    assert.deepEqual(await bytesOf(await store.get(blob.key, { start: 10, end: 19 })), content.subarray(10, 20));
    assert.deepEqual(await bytesOf(await store.get(blob.key, { start: 299_990 })), content.subarray(299_990));
    assert.deepEqual(await store.stat(blob.key), { bytes: 300_000 });
    assert.deepEqual(filesUnder(dir), [path.join(blob.key.slice(0, 2), blob.key)]);

    const empty = await store.put(Readable.from([]), { maxBytes: 10 });
    assert.equal(empty.bytes, 0);
    assert.equal(empty.sha256, createHash('sha256').digest('hex'));
    assert.notEqual(empty.key, blob.key);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a stream over its cap is refused and leaves no file, temp or final', async () => {
  const dir = tempDir();
  try {
    const store = await DiskBlobStore.open(dir);
    const { stream } = randomStream(1_000_001);
    await assert.rejects(store.put(stream, { maxBytes: 1_000_000 }), (err: unknown) => err instanceof BlobTooLarge && err.maxBytes === 1_000_000);
    assert.deepEqual(filesUnder(dir), []);
    // Exactly at the cap is fine.
    const ok = await store.put(randomStream(1_000_000).stream, { maxBytes: 1_000_000 });
    assert.equal(ok.bytes, 1_000_000);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a stream that fails midway leaves no file', async () => {
  const dir = tempDir();
  try {
    const store = await DiskBlobStore.open(dir);
    const failing = new Readable({ read() {} });
    failing.push(Buffer.alloc(1000, 1));
    setImmediate(() => failing.destroy(new Error('client went away')));
    await assert.rejects(store.put(failing, { maxBytes: 1e9 }), /client went away/);
    assert.deepEqual(filesUnder(dir), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('delete removes a blob; get and stat then say so; deleting twice is fine; foreign keys are refused', async () => {
  const dir = tempDir();
  try {
    const store = await DiskBlobStore.open(dir);
    const blob = await store.put(Readable.from([Buffer.from('hello')]), { maxBytes: 10 });
    await store.delete(blob.key);
    await store.delete(blob.key);
    assert.equal(await store.stat(blob.key), undefined);
    await assert.rejects(store.get(blob.key), BlobNotFound);
    await assert.rejects(store.get('../../etc/passwd'), /not a blob key/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('open removes temp files older than an hour and keeps recent ones (another instance may be writing)', async () => {
  const dir = tempDir();
  try {
    fs.mkdirSync(path.join(dir, '.tmp'), { recursive: true });
    const old = path.join(dir, '.tmp', 'old.part');
    const recent = path.join(dir, '.tmp', 'recent.part');
    fs.writeFileSync(old, 'x');
    fs.writeFileSync(recent, 'y');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
    fs.utimesSync(old, twoHoursAgo, twoHoursAgo);
    await DiskBlobStore.open(dir);
    assert.equal(fs.existsSync(old), false);
    assert.equal(fs.existsSync(recent), true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Starts a put whose stream never ends (an upload in flight) and waits for its temp file. */
async function stalledPut(store: DiskBlobStore, dir: string): Promise<{ part: string; stop: () => Promise<void> }> {
  const before = new Set(fs.readdirSync(path.join(dir, '.tmp')));
  const source = new Readable({ read() {} });
  source.push(Buffer.alloc(1000, 7));
  const put = store.put(source, { maxBytes: 1e6 }).then(
    () => undefined,
    () => undefined,
  );
  for (let i = 0; i < 2_000; i++) {
    const part = fs.readdirSync(path.join(dir, '.tmp')).find((n) => !before.has(n));
    if (part) return { part: path.join(dir, '.tmp', part), stop: async () => (source.destroy(new Error('stopped')), await put) };
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the put wrote no temp file');
}

test("open removes at once the parts this instance's previous process left (a crash mid-upload); another instance's recent parts and this process's own stay", async () => {
  const dir = tempDir();
  try {
    const crashed = await DiskBlobStore.open(dir, { instanceId: 'host-1:8080' });
    const cut = await stalledPut(crashed, dir);
    const other = await DiskBlobStore.open(dir, { instanceId: 'host-2:8080' });
    const live = await stalledPut(other, dir);
    // The same instance starts again (a new process: it started after the part was written).
    const restarted = await DiskBlobStore.open(dir, { instanceId: 'host-1:8080', processStart: Date.now() + 1 });
    assert.equal(fs.existsSync(cut.part), false, 'the cut-off upload of this instance is removed at start');
    assert.equal(fs.existsSync(live.part), true, 'a live writer of another instance keeps its part');
    // Opened again in the same process (as tests do): a part written since this process started is a live writer's.
    const mine = await stalledPut(restarted, dir);
    await DiskBlobStore.open(dir, { instanceId: 'host-1:8080' });
    assert.equal(fs.existsSync(mine.part), true);
    await Promise.all([cut.stop(), live.stop(), mine.stop()]);
    assert.deepEqual(filesUnder(dir), [], 'the stopped puts removed their parts');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
