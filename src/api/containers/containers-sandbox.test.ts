// Containers on the real bubblewrap sandbox, with the official openai SDK: a container
// and its files round trip byte for byte through the capped /mnt/data; the caps answer
// 400; another account's container is unreachable by id. Needs root and bubblewrap (CI).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let server: TestServer;
let client: OpenAI;
let other: OpenAI;
before(async () => {
  if (skip) return;
  server = await startTestServer();
  client = server.openai((await server.createKey({ permissions: { code_interpreter: true, files: true } })).key);
  other = server.openai((await server.createKey({ permissions: { code_interpreter: true, files: true } })).key);
});
after(() => server?.close());

test('a container and its files round trip through the sandbox; caps and other accounts hold', { skip }, async () => {
  const uploaded = await client.files.create({ file: await toFile(Buffer.from('a,b\n1,2\n'), 'data.csv'), purpose: 'user_data' });
  const c = await client.containers.create({ name: 'work', file_ids: [uploaded.id] });
  assert.match(c.id, /^cntr_/);
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const added = await client.containers.files.create(c.id, { file: await toFile(bytes, 'bytes.bin') });
  assert.equal(added.path, '/mnt/data/bytes.bin');
  const listed = await client.containers.files.list(c.id);
  assert.deepEqual(listed.data.map((f) => f.path).sort(), ['/mnt/data/bytes.bin', '/mnt/data/data.csv']);
  const back = Buffer.from(await (await client.containers.files.content.retrieve(added.id, { container_id: c.id })).arrayBuffer());
  assert.deepEqual(back, bytes);
  await assert.rejects(client.containers.files.create(c.id, { file: await toFile(Buffer.alloc(21 * 1024 * 1024), 'too-big.bin') }), (e: any) => e.status === 400 || e.status === 413);
  await assert.rejects(other.containers.retrieve(c.id), (e: any) => e.status === 404);
  await assert.rejects(other.containers.files.list(c.id), (e: any) => e.status === 404);
  await assert.rejects(other.containers.files.content.retrieve(added.id, { container_id: c.id }), (e: any) => e.status === 404);
  await assert.rejects(other.containers.delete(c.id), (e: any) => e.status === 404);
  await client.containers.delete(c.id);
  await assert.rejects(client.containers.retrieve(c.id), (e: any) => e.status === 404);
});
