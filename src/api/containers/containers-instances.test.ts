// A container used through two instances that share one PostgreSQL database and one blob
// directory, each with its own sandbox directory (its own host), with the official openai
// SDK: files added on one are read by a program on the other, what that program wrote is
// listed and downloaded through the first and read by a program there (its copy rebuilt
// from the blobs), a file deleted on one is gone on the other, and a deleted container's
// copy on the other host is swept. Needs root, bubblewrap and PostgreSQL (CI).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const skip =
  process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : process.env.TEST_DATABASE !== 'postgres' ? 'two instances share a database on PostgreSQL only' : false;
let a: TestServer;
let b: TestServer;
let onA: OpenAI;
let onB: OpenAI;

before(async () => {
  if (skip) return;
  a = await startTestServer();
  const db = a.config.database;
  b = await startTestServer({ DATABASE_URL: db.kind === 'postgres' ? db.url : '', AGENT_API_BLOB_DIR: a.config.blobDir, AGENT_API_INSTANCE_ID: 'second' });
  const { key } = await a.createKey({ permissions: { code_interpreter: true, files: true } });
  onA = a.openai(key);
  onB = b.openai(key);
});
after(async () => {
  await b?.close();
  await a?.close();
});

const run = async (client: OpenAI, container: string, code: string) => {
  const r = await client.responses.create({
    model: 'agent',
    input: `Run this:\n\n\`\`\`python\n${code}\n\`\`\`\n`,
    tools: [{ type: 'code_interpreter', container }],
    include: ['code_interpreter_call.outputs'],
  });
  const call = r.output.find((i) => i.type === 'code_interpreter_call') as any;
  return (call.outputs ?? []).map((o: any) => o.logs).join('');
};

test('a container works through either instance: files and programs on one are seen on the other', { skip }, async () => {
  const data = await onA.files.create({ file: await toFile(Buffer.from('a,b\n1,2\n'), 'data.csv'), purpose: 'user_data' });
  const c = await onA.containers.create({ name: 'shared', file_ids: [data.id] });
  await onA.containers.files.create(c.id, { file: await toFile(Buffer.from('from A'), 'note.txt') });

  // B has never seen it: its copy is made from the blobs.
  assert.equal(await run(onB, c.id, "print(open('data.csv').read().splitlines()[1], open('note.txt').read())\nopen('out.txt', 'w').write('written on B')"), '1,2 from A\n');
  const listed = await onA.containers.files.list(c.id);
  const out = listed.data.find((f) => f.path === '/mnt/data/out.txt');
  assert.ok(out, JSON.stringify(listed.data));
  assert.equal(out.source, 'assistant');
  assert.equal(await (await onA.containers.files.content.retrieve(out.id, { container_id: c.id })).text(), 'written on B');

  // A's copy is of an older version now: rebuilt before its program runs.
  assert.equal(await run(onA, c.id, "import os\nprint(open('out.txt').read(), sorted(os.listdir('.')))"), "written on B ['data.csv', 'note.txt', 'out.txt']\n");

  // A file deleted through B is gone from A's copy too.
  const note = listed.data.find((f) => f.path === '/mnt/data/note.txt')!;
  await onB.containers.files.delete(note.id, { container_id: c.id });
  assert.equal(await run(onA, c.id, "import os\nprint(sorted(os.listdir('.')))"), "['data.csv', 'out.txt']\n");

  // Deleted through A: B's copy is swept from B's host.
  const bCopy = path.join(b.config.sandboxDir, c.id);
  assert.ok(fs.existsSync(bCopy));
  await onA.containers.delete(c.id);
  assert.equal(await b.app.containers.sweepLocal(), 1);
  assert.equal(fs.existsSync(bCopy), false);
  await assert.rejects(onB.containers.retrieve(c.id), (e: any) => e.status === 404);
});
