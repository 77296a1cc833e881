// The disk blob store: whole blobs or none, caps enforced while streaming, ranges,
// delete, and temp files of a crashed process swept at open.
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
