// The messages-style surface's Files API driven by both SDK generations (1.x, and 0.x as
// the alias anthropic-sdk-0), through `client.beta.files` with the files beta flag and
// `client.files`: upload, list in pages (next_page, after_id, before_id, ids), metadata,
// download, delete; the same store as /v1/files both ways; another account's file is a
// 404; a key without the Files switch gets 403 permission_error; and uploaded files as
// `file` sources of image and document blocks, a PDF's text reaching the offline engine.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic1, { toFile as toFile1 } from '@anthropic-ai/sdk';
import Anthropic0, { toFile as toFile0 } from 'anthropic-sdk-0';
import { toFile as toFileOpenAI } from 'openai';
import { pdf } from '../../../test/helpers/documents.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

type Client = InstanceType<typeof Anthropic1>;
type ToFile = typeof toFile1;
const generations: [string, (apiKey: string) => Client, ToFile][] = [
  ['@anthropic-ai/sdk 1.x', (apiKey) => new Anthropic1({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 }), toFile1],
  ['@anthropic-ai/sdk 0.x', (apiKey) => new Anthropic0({ apiKey, baseURL: `${server.origin}/api/messages`, maxRetries: 0 }) as unknown as Client, toFile0 as unknown as ToFile],
];

const betas: ['files-api-2025-04-14'] = ['files-api-2025-04-14'];

/** A 1x1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');


/** The vendor error body of a refused SDK call: status and error.type. */
async function refusal(p: Promise<unknown>): Promise<{ status: number; type: string; message: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { status: number; error: { type: string; error: { type: string; message: string } } };
    assert.equal(err.error.type, 'error');
    return { status: err.status, type: err.error.error.type, message: err.error.error.message };
  }
  throw new Error('the call was not refused');
}

for (const [generation, make, toFile] of generations) {
  describe(`messages Files API with ${generation}`, () => {
    let client: Client;
    let apiKey: string;
    before(async () => {
      const created = await server.createKey({ permissions: { files: true } });
      apiKey = created.key;
      client = make(apiKey);
    });

    test('upload, retrieveMetadata, download, delete in the vendor shapes', async () => {
      const uploaded = await client.beta.files.upload({ file: await toFile(Buffer.from('hello files\n'), 'notes.txt', { type: 'text/plain' }), betas });
      assert.match(uploaded.id, /^file-/);
      assert.deepEqual(Object.keys(uploaded).sort(), ['created_at', 'downloadable', 'expires_at', 'filename', 'id', 'mime_type', 'size_bytes', 'type']);
      assert.equal(uploaded.type, 'file');
      assert.equal(uploaded.filename, 'notes.txt');
      assert.equal(uploaded.mime_type, 'text/plain');
      assert.equal(uploaded.size_bytes, 12);
      assert.equal(uploaded.downloadable, true);
      assert.equal(uploaded.expires_at, null);
      assert.match(uploaded.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'RFC 3339');
      assert.ok(Math.abs(Date.parse(uploaded.created_at) - Date.now()) < 24 * 3600_000);

      assert.deepEqual(await client.beta.files.retrieveMetadata(uploaded.id, { betas }), uploaded);
      assert.deepEqual(await client.files.retrieveMetadata(uploaded.id), uploaded, 'the GA methods answer the same');

      const content = await client.beta.files.download(uploaded.id, { betas });
      assert.equal(content.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(await content.text(), 'hello files\n');

      const deleted = await client.beta.files.delete(uploaded.id, { betas });
      assert.deepEqual(deleted, { id: uploaded.id, type: 'file_deleted' });
      const gone = await refusal(client.beta.files.retrieveMetadata(uploaded.id, { betas }));
      assert.equal(gone.status, 404);
      assert.equal(gone.type, 'not_found_error');
      assert.equal((await refusal(client.beta.files.delete(uploaded.id, { betas }))).status, 404);
      assert.equal((await refusal(client.beta.files.download(uploaded.id, { betas }))).status, 404);
    });

    test('list: newest first, in pages the SDK follows (next_page), after_id, before_id, ids', async () => {
      // A fresh account, so the list holds only these.
      const ownKey = (await server.createKey({ permissions: { files: true } })).key;
      const own = make(ownKey);
      const ids: string[] = [];
      for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']) ids.push((await own.beta.files.upload({ file: await toFile(Buffer.from(name), name), betas })).id);
      const newestFirst = [...ids].reverse();

      const first = await own.beta.files.list({ limit: 2, betas });
      assert.deepEqual(first.data.map((f) => f.id), newestFirst.slice(0, 2));
      const raw = (await (await server.fetch('/api/messages/v1/files?limit=2', { headers: { 'x-api-key': ownKey } })).json()) as Record<string, unknown>;
      assert.deepEqual({ ...raw, data: undefined }, { data: undefined, has_more: true, first_id: newestFirst[0], last_id: newestFirst[1], next_page: newestFirst[1] });
      const last = (await (await server.fetch(`/api/messages/v1/files?limit=2&page=${newestFirst[3]}`, { headers: { 'x-api-key': ownKey } })).json()) as Record<string, unknown>;
      assert.deepEqual({ ...last, data: undefined }, { data: undefined, has_more: false, first_id: newestFirst[4], last_id: newestFirst[4], next_page: null });
      assert.ok(first.hasNextPage());
      const second = await first.getNextPage();
      assert.deepEqual(second.data.map((f) => f.id), newestFirst.slice(2, 4));

      const all: string[] = [];
      for await (const f of own.beta.files.list({ limit: 2, betas })) all.push(f.id);
      assert.deepEqual(all, newestFirst, 'auto-pagination walks every page once');
      const ga: string[] = [];
      for await (const f of own.files.list({ limit: 3 })) ga.push(f.id);
      assert.deepEqual(ga, newestFirst);

      const afterPage = await own.beta.files.list({ limit: 2, after_id: newestFirst[1], betas } as never);
      assert.deepEqual(afterPage.data.map((f) => f.id), newestFirst.slice(2, 4));
      const beforePage = await own.beta.files.list({ limit: 2, before_id: newestFirst[4], betas } as never);
      assert.deepEqual(beforePage.data.map((f) => f.id), newestFirst.slice(2, 4), 'the two newer than before_id, newest first');

      const picked = await own.beta.files.list({ ids: [ids[0]!, ids[3]!, 'file-unknown'], betas });
      assert.deepEqual(picked.data.map((f) => f.id), [ids[3], ids[0]], 'known ids only, newest first');
      assert.equal((await own.beta.files.list({ scope_id: 'sesn_1', betas })).data.length, 0);

      const both = await refusal(own.beta.files.list({ after_id: ids[0], before_id: ids[1], betas } as never));
      assert.equal(both.status, 400);
      assert.equal(both.type, 'invalid_request_error');
      assert.match(both.message, /^before_id/);
      const tooMany = await refusal(own.beta.files.list({ limit: 1001, betas }));
      assert.equal(tooMany.status, 400);
      assert.match(tooMany.message, /'limit'.*1000/);
    });

    test('the same store as /v1/files, both ways', async () => {
      const openai = server.openai(apiKey);
      const here = await client.beta.files.upload({ file: await toFile(Buffer.from('from messages'), 'here.txt'), betas });
      const atV1 = await openai.files.retrieve(here.id);
      assert.equal(atV1.purpose, 'user_data');
      assert.equal(atV1.bytes, here.size_bytes);
      assert.equal(await (await openai.files.content(here.id)).text(), 'from messages');

      const there = await openai.files.create({ file: await toFileOpenAI(Buffer.from('from v1'), 'there.md'), purpose: 'assistants' });
      const meta = await client.beta.files.retrieveMetadata(there.id, { betas });
      assert.equal(meta.filename, 'there.md');
      assert.equal(meta.mime_type, 'text/markdown');
      assert.equal(await (await client.beta.files.download(there.id, { betas })).text(), 'from v1');

      await client.beta.files.delete(there.id, { betas });
      await assert.rejects(openai.files.retrieve(there.id), (e: unknown) => (e as { status: number }).status === 404, 'deleted here is gone at /v1');
    });

    test("another account's file is a 404, as an unknown one", async () => {
      const mine = await client.beta.files.upload({ file: await toFile(Buffer.from('private'), 'private.txt'), betas });
      const other = make((await server.createKey({ permissions: { files: true } })).key);
      for (const call of [
        () => other.beta.files.retrieveMetadata(mine.id, { betas }),
        () => other.beta.files.download(mine.id, { betas }),
        () => other.beta.files.delete(mine.id, { betas }),
        () => other.beta.files.retrieveMetadata('file-unknown', { betas }),
      ]) {
        const r = await refusal(call());
        assert.equal(r.status, 404);
        assert.equal(r.type, 'not_found_error');
      }
      assert.ok(!(await other.beta.files.list({ betas })).data.some((f) => f.id === mine.id));
      const asSource = await refusal(
        other.messages.create({ model: 'agent', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: mine.id } }, { type: 'text', text: 'Read it.' }] }] }),
      );
      assert.equal(asSource.status, 400);
      assert.match(asSource.message, /^messages\[0\]\.content\[0\]\.source\.file_id/);
      assert.equal((await client.beta.files.retrieveMetadata(mine.id, { betas })).id, mine.id, 'still there for its owner');
    });

    test('without the Files switch: 403 permission_error on every endpoint', async () => {
      const owner = await client.beta.files.upload({ file: await toFile(Buffer.from('x'), 'x.txt'), betas });
      const created = await server.createKey({ permissions: { files: false } });
      const off = make(created.key);
      const upload = await toFile(Buffer.from('x'), 'x.txt');
      for (const call of [
        () => off.beta.files.upload({ file: upload, betas }),
        () => off.beta.files.list({ betas }),
        () => off.beta.files.retrieveMetadata(owner.id, { betas }),
        () => off.beta.files.download(owner.id, { betas }),
        () => off.beta.files.delete(owner.id, { betas }),
      ]) {
        const r = await refusal(call());
        assert.equal(r.status, 403);
        assert.equal(r.type, 'permission_error');
        assert.match(r.message, /files/);
      }
    });

    test('uploaded files as file sources: a PDF document and an image in a message; the PDF text reaches the offline engine', async () => {
      const doc = await client.beta.files.upload({ file: await toFile(await pdf(['The inspection found the quokka enclosure spotless.']), 'report.pdf', { type: 'application/pdf' }), betas });
      assert.equal(doc.mime_type, 'application/pdf');
      const image = await client.beta.files.upload({ file: await toFile(PNG, 'dot.png', { type: 'image/png' }), betas });
      assert.equal(image.mime_type, 'image/png');
      const text = await client.beta.files.upload({ file: await toFile(Buffer.from('The gazebo is painted teal.'), 'memo.txt'), betas });

      const m = await client.beta.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 300,
        betas,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'file', file_id: doc.id } },
              { type: 'image', source: { type: 'file', file_id: image.id } },
              { type: 'text', text: 'What did the inspection find?' },
            ],
          },
        ],
      });
      const answer = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      assert.match(answer, /quokka/, "the PDF's text was read");
      assert.ok(m.usage.input_tokens > 10);

      const withText = await client.messages.create({
        model: 'agent',
        max_tokens: 300,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: text.id } }, { type: 'text', text: 'What colour?' }] }],
      });
      assert.match(withText.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), /teal/);

      // A stored file that is not an image cannot be an image block.
      const notImage = await refusal(
        client.messages.create({ model: 'agent', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: text.id } }] }] }),
      );
      assert.equal(notImage.status, 400);
      assert.match(notImage.message, /^messages\[0\]\.content\[0\]\.source\.file_id/);
    });
  });
}
