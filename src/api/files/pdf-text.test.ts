// A stored PDF named by file_id is read by the offline engine as a text file is, on every
// surface: /v1/chat/completions (a `file` part) and /v1/responses (an `input_file`), as on
// the messages surface. Its text is extracted on the document parser's worker threads.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { pdf } from '../../../test/helpers/documents.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

let server: TestServer;
let client: OpenAI;
let fileId: string;
before(async () => {
  server = await startTestServer();
  client = server.openai((await server.createKey()).key);
  const file = await client.files.create({ file: await toFile(await pdf(['The iguana enclosure is kept warm.']), 'report.pdf'), purpose: 'user_data' });
  fileId = file.id;
});
after(() => server.close());

test('chat: a stored PDF part is read', async () => {
  const r = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: fileId } }, { type: 'text', text: 'Summarize the document.' }] }] });
  assert.match(r.choices[0]!.message.content ?? '', /iguana/);
});

test('responses: a stored PDF input_file is read', async () => {
  const r = await client.responses.create({ model: 'agent', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fileId }, { type: 'input_text', text: 'Summarize the document.' }] }] });
  assert.match(r.output_text, /iguana/);
});
