// Skills with the official openai SDK (and raw multipart where the SDK cannot send a
// path: it keeps only a file's last name), on the database the run selected: create from
// files and from a zip, versions, the default, content round trip, every refusal of an
// upload (count, size, zip bomb, symlink, traversal, absolute path, duplicates, SKILL.md),
// another account and a key without the switch, and the read-only mount on the host.
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import JSZip from 'jszip';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { removeTree, SkillMounts } from './skill-mounts.ts';
import { Skills } from './skills-store.ts';

let server: TestServer;
let client: OpenAI;
let other: OpenAI;
let key: string;
let accountId: string;
let otherAccountId: string;
let skills: Skills;
before(async () => {
  server = await startTestServer();
  skills = new Skills(server.app.services.store.db, server.app.services.blobs);
  const k = await server.createKey({ permissions: { skills: true } });
  key = k.key;
  accountId = k.account_id;
  client = server.openai(key);
  const o = await server.createKey({ permissions: { skills: true } });
  otherAccountId = o.account_id;
  other = server.openai(o.key);
});
after(() => server.close());

const skillMd = (name: string, description = 'Adds two numbers.') => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nRun scripts/run.py.\n`;
const RUN_PY = 'print(1 + 1)\n';

async function zipOf(files: Record<string, string | Buffer>, opts: Record<string, { unixPermissions?: number }> = {}): Promise<Buffer> {
  const zip = new JSZip();
  for (const [name, data] of Object.entries(files)) zip.file(name, data, { createFolders: false, ...(opts[name] ?? {}) });
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', platform: 'UNIX' });
}

/** Same-length name surgery on a generated zip (local and central headers alike). */
const rename = (zip: Buffer, from: string, to: string) => {
  assert.equal(from.length, to.length);
  return Buffer.from(zip.toString('latin1').split(from).join(to), 'latin1');
};

/** A raw multipart POST: each file part named by its path, as a directory upload sends it. */
async function postFiles(url: string, files: Record<string, string | Buffer>, fields: Record<string, string> = {}, apiKey = key) {
  const form = new FormData();
  for (const [name, data] of Object.entries(files)) form.append('files', new Blob([typeof data === 'string' ? data : new Uint8Array(data)]), name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await server.fetch(url, { method: 'POST', body: form, key: apiKey });
  return { status: res.status, body: (await res.json()) as any };
}

const refused = async (p: Promise<unknown>, message: RegExp) =>
  assert.rejects(p, (e: any) => {
    assert.equal(e.status, 400, e.message);
    assert.equal(e.param, 'files');
    assert.match(e.message, message);
    return true;
  });

test('a skill from files named by their paths: created, retrieved, listed, content zip round trip, deleted', async () => {
  const created = await postFiles('/v1/skills', { 'adder/SKILL.md': skillMd('adder'), 'adder/scripts/run.py': RUN_PY });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const skill = created.body;
  assert.match(skill.id, /^skill_/);
  assert.deepEqual({ ...skill, id: 0, created_at: 0 }, { id: 0, created_at: 0, object: 'skill', name: 'adder', description: 'Adds two numbers.', default_version: '1', latest_version: '1' });

  const got = await client.skills.retrieve(skill.id);
  assert.equal(got.name, 'adder');
  assert.equal(got.default_version, '1');
  const listed = await client.skills.list();
  assert.ok(listed.data.some((s) => s.id === skill.id));

  const zipped = await client.skills.content.retrieve(skill.id);
  assert.equal(zipped.headers.get('content-type'), 'application/zip');
  const downloaded = Buffer.from(await zipped.arrayBuffer());
  const zip = await JSZip.loadAsync(downloaded);
  assert.deepEqual(Object.values(zip.files).filter((f) => !f.dir).map((f) => f.name).sort(), ['adder/SKILL.md', 'adder/scripts/run.py']);
  assert.equal(await zip.file('adder/scripts/run.py')!.async('string'), RUN_PY);
  // The downloaded zip uploads again as the same files.
  const again = await client.skills.versions.create(skill.id, { files: await toFile(downloaded, 'adder.zip') });
  assert.equal(again.version, '2');
  const v2 = await JSZip.loadAsync(Buffer.from(await (await client.skills.versions.content.retrieve('2', { skill_id: skill.id })).arrayBuffer()));
  assert.equal(await v2.file('adder/SKILL.md')!.async('string'), skillMd('adder'));

  const deleted = await client.skills.delete(skill.id);
  assert.deepEqual(deleted, { id: skill.id, object: 'skill.deleted', deleted: true });
  await assert.rejects(client.skills.retrieve(skill.id), (e: any) => e.status === 404 && e.param === 'skill_id');
});

test('a skill from the SDK: flat files (files[]) and one zip; versions numbered as text, the default moved, deleted', async () => {
  const flat = await client.skills.create({ files: [await toFile(Buffer.from(skillMd('flat')), 'SKILL.md'), await toFile(Buffer.from(RUN_PY), 'run.py')] });
  assert.equal(flat.name, 'flat');
  const zip = await zipOf({ 'zipped/SKILL.md': skillMd('zipped', '"Quoted: description"'), 'zipped/scripts/run.py': RUN_PY });
  const skill = await client.skills.create({ files: await toFile(zip, 'zipped.zip') });
  assert.equal(skill.name, 'zipped');
  assert.equal(skill.description, 'Quoted: description');

  const v2 = await client.skills.versions.create(skill.id, { files: await toFile(await zipOf({ 'SKILL.md': skillMd('zipped-two', 'Second.') }), 'v2.zip') });
  assert.deepEqual({ ...v2, id: 0, created_at: 0 }, { id: 0, created_at: 0, object: 'skill.version', skill_id: skill.id, version: '2', name: 'zipped-two', description: 'Second.' });
  let now = await client.skills.retrieve(skill.id);
  assert.equal(now.default_version, '1', 'not the default unless asked');
  assert.equal(now.latest_version, '2');
  const v3 = await client.skills.versions.create(skill.id, { default: true, files: await toFile(await zipOf({ 'SKILL.md': skillMd('zipped-three', 'Third.') }), 'v3.zip') });
  assert.equal(v3.version, '3');
  now = await client.skills.retrieve(skill.id);
  assert.equal(now.default_version, '3');
  assert.equal(now.name, 'zipped-three', "the skill shows its default version's front matter");

  const versions = await client.skills.versions.list(skill.id);
  assert.deepEqual(versions.data.map((v) => v.version), ['3', '2', '1']);
  const asc = await client.skills.versions.list(skill.id, { order: 'asc', limit: 2 });
  assert.deepEqual(asc.data.map((v) => v.version), ['1', '2']);
  assert.equal(asc.has_more, true);
  const rest = await client.skills.versions.list(skill.id, { order: 'asc', after: asc.data[1]!.id });
  assert.deepEqual(rest.data.map((v) => v.version), ['3']);
  assert.equal((await client.skills.versions.retrieve('2', { skill_id: skill.id })).description, 'Second.');
  await assert.rejects(client.skills.versions.retrieve('9', { skill_id: skill.id }), (e: any) => e.status === 404 && e.param === 'version');

  await assert.rejects(client.skills.versions.delete('3', { skill_id: skill.id }), (e: any) => e.status === 400 && /default version/.test(e.message));
  const back = await client.skills.update(skill.id, { default_version: '1' });
  assert.equal(back.default_version, '1');
  assert.equal(back.name, 'zipped');
  await assert.rejects(client.skills.update(skill.id, { default_version: '7' }), (e: any) => e.status === 400 && e.param === 'default_version');
  const gone = await client.skills.versions.delete('3', { skill_id: skill.id });
  assert.deepEqual(gone, { id: v3.id, object: 'skill.version.deleted', deleted: true, version: '3' });
  assert.equal((await client.skills.retrieve(skill.id)).latest_version, '2');
  const v4 = await client.skills.versions.create(skill.id, { files: await toFile(await zipOf({ 'SKILL.md': skillMd('zipped') }), 'v4.zip') });
  assert.equal(v4.version, '4', 'a deleted number is not given again');
  await client.skills.delete(skill.id);
  await client.skills.delete(flat.id);
});

test('refusals: count, size, zip bomb, symlink, traversal, absolute, duplicates, SKILL.md and its front matter', async () => {
  const md = Buffer.from(skillMd('limits'));
  const many = [await toFile(md, 'SKILL.md')];
  for (let i = 0; i < 500; i++) many.push(await toFile(Buffer.from(`${i}`), `f${i}.txt`));
  await refused(client.skills.create({ files: many }), /at most 500 files/);
  const bigZip: Record<string, string> = { 'SKILL.md': skillMd('limits') };
  for (let i = 0; i < 500; i++) bigZip[`f${i}.txt`] = `${i}`;
  await refused(client.skills.create({ files: await toFile(await zipOf(bigZip), 'many.zip') }), /at most 500 files/);

  const big = Buffer.alloc(13 * 1024 * 1024, 0x61);
  await refused(client.skills.create({ files: [await toFile(md, 'SKILL.md'), await toFile(big, 'a.bin'), await toFile(big, 'b.bin')] }), /25 MB .* in total/);
  // A zip bomb that declares its size: 26 MB of zeros packs into some 26 KB.
  const zeros = Buffer.alloc(26 * 1024 * 1024);
  const honest = await zipOf({ 'SKILL.md': skillMd('bomb'), 'bomb.bin': zeros });
  assert.ok(honest.length < 100_000);
  await refused(client.skills.create({ files: await toFile(honest, 'bomb.zip') }), /25 MB unpacked/);
  // One that lies: every size field of the entry says 1,000 bytes.
  const lying = Buffer.from(honest);
  for (let at = 0; at < lying.length - 4; at++) {
    const sig = lying.readUInt32LE(at);
    if (sig === 0x02014b50 && lying.toString('latin1', at + 46, at + 46 + 8) === 'bomb.bin') lying.writeUInt32LE(1000, at + 24);
    if (sig === 0x04034b50 && lying.toString('latin1', at + 30, at + 30 + 8) === 'bomb.bin') lying.writeUInt32LE(1000, at + 22);
  }
  await refused(client.skills.create({ files: await toFile(lying, 'liar.zip') }), /inflates to more than the 1000 bytes/);

  const link = await zipOf({ 'SKILL.md': skillMd('linky'), link: '/etc/shadow' }, { link: { unixPermissions: 0o120777 } });
  await refused(client.skills.create({ files: await toFile(link, 'link.zip') }), /symbolic link/);
  const traversal = rename(await zipOf({ 'SKILL.md': skillMd('t'), 'xx/evil': 'x' }), 'xx/evil', '../evil');
  await refused(client.skills.create({ files: await toFile(traversal, 't.zip') }), /'\.\.' segment/);
  const absolute = rename(await zipOf({ 'SKILL.md': skillMd('a'), 'aabs.txt': 'x' }), 'aabs.txt', '/abs.txt');
  await refused(client.skills.create({ files: await toFile(absolute, 'a.zip') }), /absolute path/);
  const backslash = rename(await zipOf({ 'SKILL.md': skillMd('b'), 'a_b.txt': 'x' }), 'a_b.txt', 'a\\b.txt');
  await refused(client.skills.create({ files: await toFile(backslash, 'b.zip') }), /backslash/);
  const dup = rename(await zipOf({ 'SKILL.md': skillMd('d'), 'dup1.txt': 'x', 'dup2.txt': 'y' }), 'dup2.txt', 'dup1.txt');
  await refused(client.skills.create({ files: await toFile(dup, 'd.zip') }), /appears twice/);

  for (const [files, message] of [
    [{ 'x/../SKILL.md': skillMd('p') }, /'\.\.' segment/],
    [{ '/etc/SKILL.md': skillMd('p') }, /absolute path/],
    [{ 'SKILL.md': skillMd('p'), 'SKILL.md/x': 'y' }, /both a file and a folder/],
  ] as const) {
    const res = await postFiles('/v1/skills', files);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.param, 'files');
    assert.match(res.body.error.message, message);
  }

  await refused(client.skills.create({ files: [await toFile(Buffer.from(RUN_PY), 'run.py'), await toFile(Buffer.from('x'), 'other.txt')] }), /no SKILL\.md/);
  await refused(client.skills.create({ files: await toFile(await zipOf({ 'README.md': 'hi' }), 'r.zip') }), /no SKILL\.md/);
  await refused(client.skills.create({ files: [await toFile(Buffer.from('# no front matter\n'), 'SKILL.md')] }), /must start with front matter/);
  await refused(client.skills.create({ files: [await toFile(Buffer.from('---\nname: a/b\ndescription: d\n---\n'), 'SKILL.md')] }), /skill name 'a\/b' is refused/);
  await refused(client.skills.create({ files: [await toFile(Buffer.from('---\nname: ok\n---\n'), 'SKILL.md')] }), /no 'description'/);
  await refused(client.skills.create({ files: [await toFile(Buffer.from(`---\nname: ${'n'.repeat(65)}\ndescription: d\n---\n`), 'SKILL.md')] }), /up to 64/);
  await refused(client.skills.create({ files: [await toFile(Buffer.from('---\nname: ok\ndescription: d\n'), 'SKILL.md')] }), /no closing/);
  assert.equal((await client.skills.list()).data.filter((s) => ['limits', 'bomb', 'linky', 't', 'a', 'b', 'd', 'p', 'ok'].includes(s.name)).length, 0);
});

test("another account's skill is 404; a key without the skills switch is 403", async () => {
  const mine = await client.skills.create({ files: [await toFile(Buffer.from(skillMd('private')), 'SKILL.md')] });
  await assert.rejects(other.skills.retrieve(mine.id), (e: any) => e.status === 404);
  await assert.rejects(other.skills.delete(mine.id), (e: any) => e.status === 404);
  await assert.rejects(other.skills.update(mine.id, { default_version: '1' }), (e: any) => e.status === 404);
  await assert.rejects(other.skills.versions.list(mine.id), (e: any) => e.status === 404);
  await assert.rejects(other.skills.versions.retrieve('1', { skill_id: mine.id }), (e: any) => e.status === 404);
  await assert.rejects(other.skills.content.retrieve(mine.id), (e: any) => e.status === 404);
  await assert.rejects(other.skills.versions.create(mine.id, { files: [await toFile(Buffer.from(skillMd('x')), 'SKILL.md')] }), (e: any) => e.status === 404);
  assert.ok(!(await other.skills.list()).data.some((s) => s.id === mine.id));
  assert.equal(await new SkillMounts(skills).materialize(otherAccountId, mine.id, undefined, os.tmpdir()), undefined);

  const published = (await (await server.fetch('/v1/openapi.json', { key })).json()) as any;
  const form = published.paths['/skills'].post.requestBody.content['multipart/form-data'].schema;
  assert.equal(form.properties.files.oneOf[0].maxItems, 500);

  const plain = server.openai((await server.createKey({ permissions: { files: true } })).key);
  await assert.rejects(plain.skills.list(), (e: any) => e.status === 403);
  await assert.rejects(plain.skills.create({ files: [await toFile(Buffer.from(skillMd('x')), 'SKILL.md')] }), (e: any) => e.status === 403);
  await client.skills.delete(mine.id);
});

test('materialize writes the version once, read-only, under <baseDir>/<skill_id>/<version>', async () => {
  const created = await postFiles('/v1/skills', { 'mounted/SKILL.md': skillMd('mounted'), 'mounted/scripts/run.py': RUN_PY, 'mounted/data/deep/x.txt': 'deep' });
  const id = created.body.id as string;
  await client.skills.versions.create(id, { files: [await toFile(Buffer.from(skillMd('mounted', 'v2')), 'SKILL.md')] });
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'skills-'));
  const dir = path.join(base, '.skills');
  try {
    const mounts = new SkillMounts(skills);
    // An owner-only umask (as the service may run with) must not close the way to the files:
    // the container uids reach them through <baseDir>/.skills/<skill_id>.
    const umask = process.umask(0o077);
    const mount = await mounts.materialize(accountId, id, undefined, dir).finally(() => process.umask(umask));
    assert.deepEqual(mount, { name: 'mounted', hostDir: path.join(dir, id, '1') });
    for (const d of ['.skills', `.skills/${id}`]) assert.equal((await fs.stat(path.join(base, d))).mode & 0o777, 0o711, d);
    assert.equal(await fs.readFile(path.join(mount!.hostDir, 'scripts/run.py'), 'utf8'), RUN_PY);
    assert.equal(await fs.readFile(path.join(mount!.hostDir, 'data/deep/x.txt'), 'utf8'), 'deep');
    for (const f of ['SKILL.md', 'scripts/run.py', 'data/deep/x.txt']) assert.equal((await fs.stat(path.join(mount!.hostDir, f))).mode & 0o777, 0o444, f);
    for (const d of ['.', 'scripts', 'data', 'data/deep']) assert.equal((await fs.stat(path.join(mount!.hostDir, d))).mode & 0o777, 0o555, d);
    // Once: a second call (and concurrent ones) use what is there.
    const before = (await fs.stat(path.join(mount!.hostDir, 'SKILL.md'))).mtimeMs;
    const again = await Promise.all([mounts.materialize(accountId, id, '1', dir), mounts.materialize(accountId, id, '1', dir)]);
    assert.deepEqual(again, [mount, mount]);
    assert.equal((await fs.stat(path.join(mount!.hostDir, 'SKILL.md'))).mtimeMs, before);
    const latest = await mounts.materialize(accountId, id, 'latest', dir);
    assert.deepEqual(latest, { name: 'mounted', hostDir: path.join(dir, id, '2') });
    assert.deepEqual((await fs.readdir(path.join(dir, id))).sort(), ['1', '2'], 'no temp folder left');
    assert.equal(await mounts.materialize(accountId, id, '9', dir), undefined);
    assert.equal(await mounts.materialize(accountId, '../etc', undefined, dir), undefined);
  } finally {
    await removeTree(base);
    await client.skills.delete(id);
  }
});
