// /v1/files end to end with the official openai SDK, on the database the run selected:
// byte-exact round trips, the upload limits (nothing left behind by a refused upload:
// no row, no blob), list paging, other accounts' files, the form checked by the
// contract, and chat messages naming a file by id.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { parseRange } from './byte-range.ts';

const MB = 1024 * 1024;

let server: TestServer;
let client: OpenAI;
let keyA: string;
let other: OpenAI;

before(async () => {
  server = await startTestServer();
  // No switch at all: SPEC asks only batches for the Files switch.
  keyA = (await server.createKey({ permissions: {} })).key;
  client = server.openai(keyA);
  other = server.openai((await server.createKey()).key);
});
after(async () => server?.close());

/** Every file under the blob directory, temp files included. */
function blobFiles(): string[] {
  const dir = server.config.blobDir;
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

const fileRows = () => server.app.services.store.db.selectFrom('files').select(['id', 'blob_key']).execute();

async function download(id: string, c = client): Promise<Buffer> {
  return Buffer.from(await (await c.files.content(id)).arrayBuffer());
}

/** A POST /v1/files with a hand-built form (fields in the order given). */
function postForm(parts: [string, string | Blob, string?][], key = keyA) {
  const form = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, filename);
  }
  return server.fetch('/v1/files', { method: 'POST', key, body: form });
}

async function expectRefused(p: Promise<unknown>, status: number, param: string | null, code?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof OpenAI.APIError, String(e));
    assert.equal(e.status, status, e.message);
    assert.equal(e.param ?? null, param, e.message);
    if (code) assert.equal(e.code, code);
    return true;
  });
}

test('text and binary files round-trip byte for byte, with the reference file object and a content type', async () => {
  const text = Buffer.from('héllo, wörld — ✓\nsecond line\n', 'utf8');
  const binary = randomBytes(3 * MB + 17);
  const t = await client.files.create({ file: await toFile(text, 'notes.txt'), purpose: 'user_data' });
  const b = await client.files.create({ file: await toFile(binary, 'blob.bin'), purpose: 'assistants' });

  assert.match(t.id, /^file-[0-9A-Za-z]+$/);
  assert.deepEqual(Object.keys(t).sort(), ['bytes', 'created_at', 'expires_at', 'filename', 'id', 'object', 'purpose', 'status', 'status_details']);
  assert.equal(t.object, 'file');
  assert.equal(t.bytes, text.length);
  assert.equal(t.filename, 'notes.txt');
  assert.equal(t.purpose, 'user_data');
  assert.equal(t.status, 'processed');
  assert.equal(t.expires_at, null);
  assert.ok(Number.isInteger(t.created_at) && t.created_at > 1_600_000_000 && t.created_at < 1e11, 'created_at in seconds');
  assert.equal(b.bytes, binary.length);

  assert.deepEqual(await download(t.id), text);
  assert.deepEqual(await download(b.id), binary);
  assert.deepEqual(await client.files.retrieve(b.id), b);

  const res = await server.fetch(`/v1/files/${t.id}/content`, { key: keyA });
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(res.headers.get('content-length'), String(text.length));
  await res.arrayBuffer();
  const bin = await server.fetch(`/v1/files/${b.id}/content`, { key: keyA });
  assert.equal(bin.headers.get('content-type'), 'application/octet-stream');
  await bin.arrayBuffer();
});

test('a Range request gets 206 with exactly those bytes; a range that cannot be served gets the whole file', async () => {
  const content = randomBytes(1000);
  const f = await client.files.create({ file: await toFile(content, 'r.bin'), purpose: 'user_data' });
  const part = await server.fetch(`/v1/files/${f.id}/content`, { key: keyA, headers: { range: 'bytes=10-19' } });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), 'bytes 10-19/1000');
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), content.subarray(10, 20));
  const whole = await server.fetch(`/v1/files/${f.id}/content`, { key: keyA, headers: { range: 'bytes=5000-' } });
  assert.equal(whole.status, 200);
  assert.deepEqual(Buffer.from(await whole.arrayBuffer()), content);

  assert.deepEqual(parseRange('bytes=-100', 1000), { start: 900, end: 999 });
  assert.deepEqual(parseRange('bytes=990-2000', 1000), { start: 990, end: 999 });
  for (const h of ['bytes=1-2,5-6', 'items=1-2', 'bytes=-0', 'bytes=5-1', 'bytes=', 'bytes=1000-']) assert.equal(parseRange(h, 1000), undefined, h);
});

test('20 MB is the limit: 20 MB + 1 byte is refused naming file, and leaves no row and no blob', async () => {
  const rowsBefore = (await fileRows()).length;
  const blobsBefore = blobFiles().length;
  await expectRefused(client.files.create({ file: await toFile(Buffer.alloc(20 * MB + 1, 0x61), 'big.txt'), purpose: 'user_data' }), 400, 'file', 'invalid_request');
  // purpose first: refused while streaming, at the 20 MB cap.
  const early = await postForm([['purpose', 'user_data'], ['file', new Blob([Buffer.alloc(20 * MB + 1)]), 'big.bin']]);
  assert.equal(early.status, 400);
  assert.equal(((await early.json()) as { error: { param: string } }).error.param, 'file');
  assert.equal((await fileRows()).length, rowsBefore);
  assert.equal(blobFiles().length, blobsBefore);

  const exact = await client.files.create({ file: await toFile(Buffer.alloc(20 * MB, 0x62), 'exact.txt'), purpose: 'user_data' });
  assert.equal(exact.bytes, 20 * MB);
  await client.files.delete(exact.id);
});

test('a batch .jsonl may be larger: 30 MB is accepted whether purpose comes after the file (as the SDK sends it) or before', async () => {
  const line = `${JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'agent', messages: [{ role: 'user', content: 'hi' }] } })}\n`;
  const jsonl = Buffer.from(line.repeat(Math.ceil((30 * MB) / line.length)));
  const f = await client.files.create({ file: await toFile(jsonl, 'requests.jsonl'), purpose: 'batch' });
  assert.equal(f.bytes, jsonl.length);
  assert.deepEqual(await download(f.id), jsonl);
  const res = await server.fetch(`/v1/files/${f.id}/content`, { key: keyA });
  assert.equal(res.headers.get('content-type'), 'application/jsonl');
  await res.arrayBuffer();
  const first = await postForm([['purpose', 'batch'], ['file', new Blob([jsonl]), 'first.jsonl']]);
  assert.equal(first.status, 200);
  await client.files.delete(f.id);
  await client.files.delete(((await first.json()) as { id: string }).id);

  // The larger limit is for a .jsonl with purpose batch only; nothing is left of a refusal.
  const blobsBefore = blobFiles().length;
  const rowsBefore = (await fileRows()).length;
  await expectRefused(client.files.create({ file: await toFile(jsonl, 'requests.jsonl'), purpose: 'user_data' }), 400, 'file');
  await expectRefused(client.files.create({ file: await toFile(jsonl, 'requests.txt'), purpose: 'batch' }), 400, 'file');
  assert.equal(blobFiles().length, blobsBefore);
  assert.equal((await fileRows()).length, rowsBefore);
});

test('list pages by after, limit and order, filters by purpose, and shows only the caller\'s files', async () => {
  const { key } = await server.createKey();
  const c = server.openai(key);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    made.push((await c.files.create({ file: await toFile(Buffer.from(`file ${i}`), `f${i}.txt`), purpose: i % 2 ? 'assistants' : 'user_data' })).id);
  }
  const desc = await c.files.list();
  assert.deepEqual(desc.data.map((f) => f.id), [...made].reverse(), 'newest first by default; no other account\'s files');

  const page1 = await c.files.list({ limit: 2, order: 'asc' });
  assert.deepEqual(page1.data.map((f) => f.id), made.slice(0, 2));
  assert.equal(page1.has_more, true);
  const raw = (await (await server.fetch('/v1/files?limit=2&order=asc', { key })).json()) as Record<string, unknown>;
  assert.deepEqual([raw.object, raw.first_id, raw.last_id, raw.has_more], ['list', made[0], made[1], true]);
  const page2 = await c.files.list({ limit: 2, order: 'asc', after: made[1] });
  assert.deepEqual(page2.data.map((f) => f.id), made.slice(2, 4));
  const page3 = await c.files.list({ limit: 2, order: 'asc', after: made[3] });
  assert.deepEqual(page3.data.map((f) => f.id), made.slice(4));
  assert.equal(page3.has_more, false);

  // The SDK's auto-pagination walks the same cursor.
  const all: string[] = [];
  for await (const f of c.files.list({ limit: 2, order: 'asc' })) all.push(f.id);
  assert.deepEqual(all, made);

  const assistants = await c.files.list({ purpose: 'assistants' });
  assert.deepEqual(assistants.data.map((f) => f.id), [made[3], made[1]]);
  assert.equal((await c.files.list({ purpose: 'batch' })).data.length, 0);
  await expectRefused(c.files.list({ limit: 10_001 }), 400, 'limit');
});

test("another account's file is 404 on retrieve, content and delete, and stays its owner's", async () => {
  const f = await client.files.create({ file: await toFile(Buffer.from('mine'), 'mine.txt'), purpose: 'user_data' });
  await expectRefused(other.files.retrieve(f.id), 404, 'file_id');
  await expectRefused(other.files.content(f.id), 404, 'file_id');
  await expectRefused(other.files.delete(f.id), 404, 'file_id');
  assert.deepEqual(await download(f.id), Buffer.from('mine'));
  await expectRefused(client.files.retrieve('file-nope'), 404, 'file_id');
});

test('delete removes the row and the blob; the id is then unknown', async () => {
  const before = blobFiles().length;
  const f = await client.files.create({ file: await toFile(randomBytes(1000), 'gone.bin'), purpose: 'vision' });
  assert.equal(blobFiles().length, before + 1);
  assert.deepEqual(await client.files.delete(f.id), { id: f.id, object: 'file', deleted: true });
  assert.equal(blobFiles().length, before);
  await expectRefused(client.files.retrieve(f.id), 404, 'file_id');
  await expectRefused(client.files.delete(f.id), 404, 'file_id');
});

test('the form is checked by the contract: expires_after refused, purpose required and limited to six, unknown fields ignored and named', async () => {
  const blobsBefore = blobFiles().length;
  const rowsBefore = (await fileRows()).length;
  const file = async () => toFile(Buffer.from('x'), 'x.txt');
  await expectRefused(client.files.create({ file: await file(), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 3600 } }), 400, 'expires_after', 'unsupported_parameter');
  await expectRefused(client.files.create({ file: await file(), purpose: 'batch_output' as 'batch' }), 400, 'purpose');
  await expectRefused(client.files.create({ file: await file() } as OpenAI.FileCreateParams), 400, 'purpose');
  await expectRefused(client.files.create({ purpose: 'batch' } as OpenAI.FileCreateParams), 400, 'file');

  const ignored = await postForm([['file', new Blob(['abc']), 'a.txt'], ['purpose', 'evals'], ['colour', 'blue'], ['extra', new Blob(['zzz']), 'extra.bin']]);
  assert.equal(ignored.status, 200);
  assert.equal(ignored.headers.get('x-service-ignored-parameters'), 'colour, extra');
  await client.files.delete(((await ignored.json()) as { id: string }).id);

  const cases: [string, [string, string | Blob, string?][], string | null][] = [
    ['file as a text field', [['file', 'not a file'], ['purpose', 'batch']], 'file'],
    ['two files', [['file', new Blob(['a']), 'a.txt'], ['file', new Blob(['b']), 'b.txt'], ['purpose', 'batch']], 'file'],
    ['purpose twice', [['file', new Blob(['a']), 'a.txt'], ['purpose', 'batch'], ['purpose', 'evals']], 'purpose'],
    ['purpose as a file', [['file', new Blob(['a']), 'a.txt'], ['purpose', new Blob(['batch']), 'p.txt']], 'purpose'],
    ['a name that reaches a prototype', [['file', new Blob(['a']), 'a.txt'], ['purpose', 'batch'], ['__proto__[x]', '1']], '__proto__[x]'],
    ['an unused file part over 1 MB', [['file', new Blob(['a']), 'a.txt'], ['purpose', 'batch'], ['extra', new Blob([Buffer.alloc(2 * MB)]), 'x.bin']], 'extra'],
    ['a text part over 64 KB', [['file', new Blob(['a']), 'a.txt'], ['purpose', 'batch'], ['note', 'n'.repeat(65 * 1024)]], 'note'],
  ];
  for (const [what, parts, param] of cases) {
    const res = await postForm(parts);
    const body = (await res.json()) as { error: { param: string | null; type: string } };
    assert.equal(res.status, 400, what);
    assert.equal(body.error.param, param, what);
  }

  const json = await server.fetch('/v1/files', { method: 'POST', key: keyA, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ file: 'x', purpose: 'batch' }) });
  assert.equal(json.status, 400);
  assert.match(((await json.json()) as { error: { message: string } }).error.message, /multipart\/form-data/);
  const plain = await server.fetch('/v1/files', { method: 'POST', key: keyA, headers: { 'content-type': 'text/plain' }, body: 'x' });
  assert.equal(plain.status, 400);
  assert.match(((await plain.json()) as { error: { message: string } }).error.message, /multipart\/form-data/);
  // multipart where JSON is expected
  const form = new FormData();
  form.append('model', 'agent');
  const chat = await server.fetch('/v1/chat/completions', { method: 'POST', key: keyA, body: form });
  assert.equal(chat.status, 400);
  await chat.arrayBuffer();

  assert.equal(blobFiles().length, blobsBefore, 'no refused upload left a blob');
  assert.equal((await fileRows()).length, rowsBefore, 'no refused upload left a row');
});

test('a body that ends mid-file is refused, and the part already stored is removed', async () => {
  const blobsBefore = blobFiles().length;
  const head = '--b0\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n--b0\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n';
  const res = await server.fetch('/v1/files', { method: 'POST', key: keyA, headers: { 'content-type': 'multipart/form-data; boundary=b0' }, body: Buffer.concat([Buffer.from(head), randomBytes(MB)]) });
  assert.equal(res.status, 400);
  await res.arrayBuffer();
  assert.equal(blobFiles().length, blobsBefore);
});

test('a client that goes away mid-upload leaves no blob and no row', async () => {
  const blobsBefore = blobFiles().length;
  const rowsBefore = (await fileRows()).length;
  const pause = () => new Promise((r) => setTimeout(r, 25));
  const req = http.request(`${server.origin}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${keyA}`, 'content-type': 'multipart/form-data; boundary=b1' } });
  req.on('error', () => undefined);
  req.write('--b1\r\nContent-Disposition: form-data; name="file"; filename="left.bin"\r\n\r\n');
  req.write(randomBytes(MB));
  // Gone once the server is writing the part (its temp file exists), then waited for (bounded).
  for (let i = 0; i < 200 && blobFiles().length === blobsBefore; i++) await pause();
  assert.equal(blobFiles().length, blobsBefore + 1, 'the part was being stored');
  req.destroy();
  for (let i = 0; i < 200 && blobFiles().length !== blobsBefore; i++) await pause();
  assert.equal(blobFiles().length, blobsBefore);
  assert.equal((await fileRows()).length, rowsBefore);
});

test('a chat message can name a stored file by file_id; an unknown id or another account\'s is refused naming the part', async () => {
  const f = await client.files.create({ file: await toFile(Buffer.from('What is 12 * 7?'), 'question.txt'), purpose: 'user_data' });
  const r = await client.chat.completions.create({
    model: 'agent',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Answer the question in this file.' }, { type: 'file', file: { file_id: f.id } }] }],
  });
  assert.match(r.choices[0]!.message.content ?? '', /84/, 'the offline engine read the text file');

  const bin = await client.files.create({ file: await toFile(randomBytes(100), 'scan.pdf'), purpose: 'user_data' });
  const withPdf = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: bin.id } }] }] });
  assert.equal(withPdf.choices[0]!.finish_reason, 'stop');

  const unknown = { model: 'agent', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }, { type: 'file' as const, file: { file_id: 'file-unknown' } }] }] };
  await expectRefused(client.chat.completions.create(unknown), 400, 'messages[0].content[1].file.file_id');
  await expectRefused(other.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: f.id } }] }] }), 400, 'messages[0].content[0].file.file_id');
});
