// Containers with the official openai SDK, on the database the run selected, over a
// sandbox of plain directories (fake-sandbox.test-support.ts): create with copied files,
// list, retrieve, delete; files by upload and by file_id, listed (with the files a program
// wrote), read back byte for byte, removed; the limited fields, the switches, another
// account, expiry, and the 503 of a server that cannot run code.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { FakeSandbox } from './fake-sandbox.test-support.ts';

let server: TestServer;
let sandbox: FakeSandbox;
let client: OpenAI;
let other: OpenAI;
let clientKey: string;
before(async () => {
  sandbox = await FakeSandbox.create();
  server = await startTestServer({}, { sandbox });
  clientKey = (await server.createKey({ permissions: { code_interpreter: true, files: true } })).key;
  client = server.openai(clientKey);
  other = server.openai((await server.createKey({ permissions: { code_interpreter: true, files: true } })).key);
});
after(async () => {
  await server.close();
  await sandbox.close();
});

const upload = async (c: OpenAI, name: string, content: string | Buffer) => c.files.create({ file: await toFile(Buffer.from(content), name), purpose: 'user_data' });
/** Every byte value, twice, and some UTF-8: what comes back must be identical. */
const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)), Buffer.from('ünïcödé\r\n\0end')]);
const dataDir = (containerId: string) => path.join(sandbox.root, containerId);
/** Uploads into containers leave no blob behind: every blob is an uploaded file's or a container file's. */
async function assertNoStrayBlobs() {
  const db = server.app.services.store.db;
  const keys = new Set([
    ...(await db.selectFrom('files').select('blob_key').execute()).map((r) => r.blob_key),
    ...(await db.selectFrom('container_files').select('blob_key').execute()).map((r) => r.blob_key),
  ]);
  const blobs = (await fs.readdir(server.config.blobDir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  assert.deepEqual(blobs.filter((name) => !keys.has(name)), []);
}
const is = (status: number, param?: string) => (e: any) => {
  assert.equal(e.status, status, JSON.stringify(e.error));
  if (param !== undefined) assert.equal(e.param, param, JSON.stringify(e.error));
  return true;
};

test('create with name, file_ids and expires_after; retrieve, list by name, delete', async () => {
  const a = await upload(client, 'data.csv', 'x,y\n1,2\n3,4\n');
  const b = await upload(client, 'blob.bin', BINARY);
  const created = await client.containers.create({ name: 'analysis', file_ids: [a.id, b.id], expires_after: { anchor: 'last_active_at', minutes: 5 } });
  assert.match(created.id, /^cntr_/);
  assert.equal(created.object, 'container');
  assert.equal(created.name, 'analysis');
  assert.equal(created.status, 'running');
  assert.deepEqual(created.expires_after, { anchor: 'last_active_at', minutes: 5 });
  assert.equal(created.memory_limit, '1g');
  assert.deepEqual(created.network_policy, { type: 'disabled' });
  assert.ok(Math.abs(created.created_at - Date.now() / 1000) < 60);
  assert.equal(created.last_active_at, created.created_at);
  assert.deepEqual(await fs.readFile(path.join(dataDir(created.id), 'data.csv'), 'utf8'), 'x,y\n1,2\n3,4\n');
  assert.deepEqual(await fs.readFile(path.join(dataDir(created.id), 'blob.bin')), BINARY);

  const files = await client.containers.files.list(created.id);
  assert.deepEqual(files.data.map((f) => f.path).sort(), ['/mnt/data/blob.bin', '/mnt/data/data.csv']);
  assert.ok(files.data.every((f) => f.source === 'user' && f.container_id === created.id && /^cfile_/.test(f.id)));
  assert.equal(files.data.find((f) => f.path === '/mnt/data/blob.bin')!.bytes, BINARY.length);

  const plain = await client.containers.create({ name: 'defaults' });
  assert.deepEqual(plain.expires_after, { anchor: 'last_active_at', minutes: 20 });
  assert.equal((await client.containers.retrieve(created.id)).name, 'analysis');
  const named = await client.containers.list({ name: 'analysis' } as any);
  assert.deepEqual(named.data.map((c) => c.id), [created.id]);
  const all = await client.containers.list({ limit: 1 });
  assert.equal(all.data[0]!.id, plain.id, 'newest first');
  assert.equal(all.has_more, true);
  const next = await client.containers.list({ limit: 1, after: plain.id });
  assert.equal(next.data[0]!.id, created.id);

  await client.containers.delete(created.id);
  await assert.rejects(client.containers.retrieve(created.id), is(404, 'container_id'));
  await assert.rejects(fs.stat(dataDir(created.id)), 'the directory is gone');
  const rows = await server.app.services.store.db.selectFrom('container_files').select('id').where('container_id', '=', created.id).execute();
  assert.equal(rows.length, 0);
  assert.equal((await client.files.retrieve(a.id)).id, a.id, 'the uploaded file stays');
  await assert.rejects(client.containers.create({ name: 'x', file_ids: [a.id, 'file-nope'] }), is(400, 'file_ids[1]'));
});

test('files: multipart upload and file_id, listed, retrieved, content byte for byte, deleted', async () => {
  const container = await client.containers.create({ name: 'files' });
  const sent = await client.containers.files.create(container.id, { file: await toFile(BINARY, 'report.bin') });
  assert.equal(sent.object, 'container.file');
  assert.equal(sent.path, '/mnt/data/report.bin');
  assert.equal(sent.bytes, BINARY.length);
  assert.equal(sent.source, 'user');
  assert.equal(sent.container_id, container.id);

  const up = await upload(client, 'notes.txt', 'hello from an uploaded file\n');
  const copied = await client.containers.files.create(container.id, { file_id: up.id });
  assert.equal(copied.path, '/mnt/data/notes.txt');
  assert.equal(copied.bytes, 28);

  const got = await client.containers.files.retrieve(sent.id, { container_id: container.id });
  assert.deepEqual(got, sent);
  const content = await client.containers.files.content.retrieve(sent.id, { container_id: container.id });
  assert.equal(content.headers.get('content-type'), 'application/octet-stream');
  assert.deepEqual(Buffer.from(await content.arrayBuffer()), BINARY);
  const text = await client.containers.files.content.retrieve(copied.id, { container_id: container.id });
  assert.equal(text.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(await text.text(), 'hello from an uploaded file\n');

  // A file a program wrote appears (source assistant); one it removed disappears.
  await fs.mkdir(path.join(dataDir(container.id), 'out'), { recursive: true });
  await fs.writeFile(path.join(dataDir(container.id), 'out', 'chart.png'), Buffer.from('png bytes'));
  await fs.rm(path.join(dataDir(container.id), 'notes.txt'));
  const listed = await client.containers.files.list(container.id, { order: 'asc' });
  assert.deepEqual(listed.data.map((f) => [f.path, f.source]), [
    ['/mnt/data/report.bin', 'user'],
    ['/mnt/data/out/chart.png', 'assistant'],
  ]);
  const chart = listed.data[1]!;
  assert.equal(chart.bytes, 9);
  assert.equal(await (await client.containers.files.content.retrieve(chart.id, { container_id: container.id })).text(), 'png bytes');
  await assert.rejects(client.containers.files.retrieve(copied.id, { container_id: container.id }), is(404, 'file_id'));

  // The same name again replaces the file.
  const again = await client.containers.files.create(container.id, { file: await toFile(Buffer.from('v2'), 'report.bin') });
  assert.notEqual(again.id, sent.id);
  assert.equal(again.bytes, 2);
  assert.equal((await client.containers.files.list(container.id)).data.length, 2);

  await client.containers.files.delete(again.id, { container_id: container.id });
  await assert.rejects(fs.stat(path.join(dataDir(container.id), 'report.bin')));
  await assert.rejects(client.containers.files.retrieve(again.id, { container_id: container.id }), is(404, 'file_id'));
  await assert.rejects(client.containers.files.content.retrieve(again.id, { container_id: container.id }), is(404, 'file_id'));
  assert.deepEqual((await client.containers.files.list(container.id)).data.map((f) => f.id), [chart.id]);
  await assertNoStrayBlobs();
});

test('file names, the exactly-one rule and the caps are refused naming the field', async () => {
  const container = await client.containers.create({ name: 'refusals' });
  for (const name of ['..', '.', 'a\u0001b']) {
    await assert.rejects(client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), name) }), is(400, 'file'), name);
  }
  // The multipart parser keeps a part's base name only (busboy), so a path never arrives.
  const based = await client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), '../dir/x.txt') });
  assert.equal(based.path, '/mnt/data/x.txt');
  const dot = await client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), '.hidden') });
  assert.equal(dot.path, '/mnt/data/.hidden', 'a leading dot is fine');
  await assert.rejects(client.containers.files.create(container.id, {}), is(400, 'file'));
  const up = await upload(client, 'u.txt', 'u');
  const both = new FormData();
  both.append('file_id', up.id);
  both.append('file', new Blob(['x']), 'x.txt');
  const res = await server.fetch(`/v1/containers/${container.id}/files`, { method: 'POST', key: clientKey, body: both });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as any).error.param, 'file_id', 'both sent: the second is named');
  await assert.rejects(client.containers.files.create(container.id, { file_id: 'file-nope' }), is(400, 'file_id'));

  sandbox.maxFiles = (await client.containers.files.list(container.id)).data.length + 1;
  try {
    await client.containers.files.create(container.id, { file_id: up.id });
    await assert.rejects(client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), 'third.txt') }), (e: any) => {
      is(400, 'file')(e);
      assert.match(e.message, /1,000 files/);
      return true;
    });
  } finally {
    sandbox.maxFiles = 1_000;
  }
  await assertNoStrayBlobs();
});

test('limited memory_limit and network_policy, skills, and the switches', async () => {
  await assert.rejects(client.containers.create({ name: 'big', memory_limit: '4g' }), is(400, 'memory_limit'));
  await assert.rejects(client.containers.create({ name: 'net', network_policy: { type: 'allowlist', allowed_domains: ['example.com'] } }), (e: any) => {
    assert.equal(e.status, 400);
    assert.match(String(e.param), /^network_policy/);
    return true;
  });
  const ok = await client.containers.create({ name: 'fine', memory_limit: '1g', network_policy: { type: 'disabled' } });
  assert.equal(ok.status, 'running');
  const skill = { type: 'skill_reference' as const, skill_id: 'skill_abc' };
  await assert.rejects(client.containers.create({ name: 's', skills: [skill] }), is(403, 'skills'));
  const withSkills = server.openai((await server.createKey({ permissions: { code_interpreter: true, skills: true } })).key);
  await assert.rejects(withSkills.containers.create({ name: 's', skills: [skill] }), is(400, 'skills[0].skill_id'));
  const plain = server.openai((await server.createKey({ permissions: { files: true } })).key);
  await assert.rejects(plain.containers.list(), is(403));
  await assert.rejects(plain.containers.create({ name: 'x' }), is(403));
  await assert.rejects(plain.containers.retrieve(ok.id), is(403));
});

test("another account's container is 404 everywhere", async () => {
  const container = await client.containers.create({ name: 'private' });
  const file = await client.containers.files.create(container.id, { file: await toFile(Buffer.from('secret'), 'secret.txt') });
  const theirs = await upload(other, 'theirs.txt', 'theirs');
  const ref = { container_id: container.id };
  await assert.rejects(other.containers.retrieve(container.id), is(404, 'container_id'));
  await assert.rejects(other.containers.delete(container.id), is(404, 'container_id'));
  await assert.rejects(other.containers.files.list(container.id), is(404, 'container_id'));
  await assert.rejects(other.containers.files.create(container.id, { file_id: theirs.id }), is(404, 'container_id'));
  await assert.rejects(other.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), 'x.txt') }), is(404, 'container_id'));
  await assert.rejects(other.containers.files.retrieve(file.id, ref), is(404, 'container_id'));
  await assert.rejects(other.containers.files.content.retrieve(file.id, ref), is(404, 'container_id'));
  await assert.rejects(other.containers.files.delete(file.id, ref), is(404, 'container_id'));
  assert.ok(!(await other.containers.list()).data.some((c) => c.id === container.id));
  // Their container cannot take this account's uploaded file either.
  const mine = await upload(client, 'mine.txt', 'mine');
  const own = await other.containers.create({ name: 'theirs' });
  await assert.rejects(other.containers.files.create(own.id, { file_id: mine.id }), is(400, 'file_id'));
  await assert.rejects(other.containers.create({ name: 'x', file_ids: [mine.id] }), is(400, 'file_ids[0]'));
  assert.equal(await (await client.containers.files.content.retrieve(file.id, ref)).text(), 'secret');
});

test('an idle container expires: its files go, retrieve says expired, using it is 400', async () => {
  const container = await client.containers.create({ name: 'idle', expires_after: { anchor: 'last_active_at', minutes: 1 } });
  await client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), 'x.txt') });
  const db = server.app.services.store.db;
  const before = (await db.selectFrom('containers').select('last_active_at').where('id', '=', container.id).executeTakeFirstOrThrow()).last_active_at;
  assert.ok(before >= container.last_active_at! * 1000, 'a file added touched it');
  await db.updateTable('containers').set({ last_active_at: Date.now() - 2 * 60_000 }).where('id', '=', container.id).execute();
  // Idle past its expiry, it is expired at once, before the sweep.
  assert.equal((await client.containers.retrieve(container.id)).status, 'expired');
  assert.equal(await server.app.containers.expire(), 1);
  const expired = await client.containers.retrieve(container.id);
  assert.equal(expired.status, 'expired');
  await assert.rejects(fs.stat(dataDir(container.id)), 'the directory is gone');
  assert.equal((await db.selectFrom('container_files').select('id').where('container_id', '=', container.id).execute()).length, 0);
  await assert.rejects(client.containers.files.create(container.id, { file: await toFile(Buffer.from('x'), 'y.txt') }), (e: any) => {
    is(400, 'container_id')(e);
    assert.match(e.message, new RegExp(`Container ${container.id} has expired`));
    return true;
  });
  await assert.rejects(client.containers.files.list(container.id), is(400, 'container_id'));
  assert.equal(await server.app.containers.expire(), 0, 'once');
  await client.containers.delete(container.id);
  await assert.rejects(client.containers.retrieve(container.id), is(404));
});

test('a sandbox that cannot run: 503 saying why', async () => {
  sandbox.currentStatus = { available: false, reason: 'bwrap is not installed.' };
  try {
    await assert.rejects(client.containers.create({ name: 'x' }), (e: any) => {
      is(503)(e);
      assert.equal(e.error?.code ?? e.code, 'service_unavailable');
      assert.equal(e.error.message, 'Code execution is not available on this server: bwrap is not installed.');
      return true;
    });
    await assert.rejects(client.containers.list(), is(503));
  } finally {
    sandbox.currentStatus = { available: true };
  }
  // The real sandbox, somewhere it cannot make its directories.
  const bare = await startTestServer({ AGENT_API_SANDBOX_DIR: '/dev/null/agent-api-containers' });
  try {
    const c = bare.openai((await bare.createKey({ permissions: { code_interpreter: true } })).key);
    await assert.rejects(c.containers.create({ name: 'x' }), (e: any) => {
      is(503)(e);
      assert.match(e.error.message, /^Code execution is not available on this server: /);
      return true;
    });
  } finally {
    await bare.close();
  }
});

test('an account has at most AGENT_API_CONTAINERS_PER_ACCOUNT running containers; deleting one makes room', async () => {
  const fake = await FakeSandbox.create();
  const capped = await startTestServer({ AGENT_API_CONTAINERS_PER_ACCOUNT: '2' }, { sandbox: fake });
  try {
    const c = capped.openai((await capped.createKey({ permissions: { code_interpreter: true } })).key);
    const first = await c.containers.create({ name: 'one' });
    await c.containers.create({ name: 'two' });
    await assert.rejects(c.containers.create({ name: 'three' }), (e: any) => e.status === 429 && e.code === 'insufficient_quota' && /most it may have/.test(e.message));
    // Another account has its own count.
    const d = capped.openai((await capped.createKey({ permissions: { code_interpreter: true } })).key);
    await d.containers.create({ name: 'theirs' });
    await c.containers.delete(first.id);
    assert.equal((await c.containers.create({ name: 'three' })).name, 'three');
  } finally {
    await capped.close();
    await fake.close();
  }
});

test('adds of one file name at once all succeed and leave one file', async () => {
  const c = await client.containers.create({ name: 'race' });
  const added = await Promise.all(Array.from({ length: 6 }, (_, i) => client.containers.files.create(c.id, { file: new File([`v${i}`], 'same.txt') })));
  assert.equal(new Set(added.map((f) => f.id)).size, 6);
  const listed = await client.containers.files.list(c.id);
  assert.deepEqual(listed.data.map((f) => f.path), ['/mnt/data/same.txt']);
  assert.ok(added.some((f) => f.id === listed.data[0]!.id));
  // Every replaced version's blob is gone: the one kept is the only one left of this name.
  await assertNoStrayBlobs();
  await client.containers.delete(c.id);
  await assertNoStrayBlobs();
});
