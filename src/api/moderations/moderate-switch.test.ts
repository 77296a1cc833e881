// The Moderate requests switch (issue 21 item 3) with the official openai SDK: a key with
// it on has flagged chat, completions and responses input refused with a 400
// content_flagged naming the input, before any model runs and with nothing charged;
// clean input passes; a key without it is not moderated; the code is in /v1/capabilities.
// Images in chat (`image_url`) and responses (`input_image`) input are moderated too (a
// drawing the test makes passes; one that cannot be read is a 400 naming the part).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { dataUrl, lineDrawingPng } from '../../providers/inline/moderation/test-images.test-support.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const THREAT = 'I am going to kill you.';

test('flagged chat, completions and responses input is refused before any model runs, charging nothing; clean input passes', async () => {
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id, permissions: { moderate: true } });
  const client = server.openai(key);
  const flagged = (param: string) => (e: any) => e.status === 400 && e.error?.code === 'content_flagged' && e.error?.param === param && /harassment\/threatening/.test(e.error?.message) && !e.error?.message.includes(THREAT);
  await assert.rejects(client.chat.completions.create({ model: 'agent', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: THREAT }] }), flagged('messages[1].content'));
  await assert.rejects(client.completions.create({ model: 'agent', prompt: THREAT }), flagged('prompt'));
  await assert.rejects(client.responses.create({ model: 'agent', input: THREAT }), flagged('input'));
  await assert.rejects(client.responses.create({ model: 'agent', input: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'input_text', text: THREAT }] }] }), flagged('input[1].content'));
  await assert.rejects(client.responses.create({ model: 'agent', instructions: THREAT, input: 'hi' }), flagged('instructions'));
  const after = (await server.admin('GET', `/accounts/${account.id}`)).body as { credits: number };
  assert.equal(after.credits, 10, 'nothing was charged');

  const ok = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: 'Kill the process on port 8080, please.' }] });
  assert.equal(ok.choices[0]!.finish_reason, 'stop');

  // The activity rows say it was moderated and what was flagged: categories, never the text.
  await server.app.services.activity.flush();
  const rows = (await server.admin('GET', `/activity?account_id=${account.id}`)).body.data as { endpoint: string; status: number; moderation: { flagged: string[] } | null }[];
  const chat = rows.filter((r) => r.endpoint === '/v1/chat/completions');
  assert.ok(chat.some((r) => r.status === 400 && r.moderation?.flagged.includes('harassment/threatening')));
  assert.ok(chat.some((r) => r.status === 200 && r.moderation !== null && r.moderation.flagged.length === 0));
  assert.equal(JSON.stringify(rows).includes(THREAT), false);
});

test('a key without the switch is not moderated; the code is published', async () => {
  const { key: key2, account_id } = await server.createKey({});
  const r = await server.openai(key2).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: THREAT }] });
  assert.equal(r.object, 'chat.completion');
  await server.app.services.activity.flush();
  const rows = (await server.admin('GET', `/activity?account_id=${account_id}`)).body.data as { moderation: unknown }[];
  assert.ok(rows.length > 0 && rows.every((row) => row.moderation === null), 'not moderated');
  const caps = (await (await server.fetch('/v1/capabilities')).json()) as { errors: { code: string; status: number }[] };
  assert.ok(caps.errors.some((e) => e.code === 'content_flagged' && e.status === 400));
});

test('images in chat and responses input are moderated: a plain drawing passes, an unreadable image is refused naming the part', { timeout: 180_000 }, async () => {
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id, permissions: { moderate: true } });
  const client = server.openai(key);
  const drawing = dataUrl(await lineDrawingPng());
  const chat = await client.chat.completions.create({
    model: 'agent',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: drawing } }] }],
  });
  assert.equal(chat.choices[0]!.finish_reason, 'stop');
  const response = await client.responses.create({ model: 'agent', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Describe it.' }, { type: 'input_image', image_url: drawing, detail: 'auto' }] }] });
  assert.equal(response.status, 'completed');

  const unreadable = (param: string) => (e: any) => e.status === 400 && e.error?.type === 'invalid_request_error' && e.error?.param === param && /cannot be moderated/.test(e.error?.message);
  await assert.rejects(
    client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAAAAAAAAAAAAAAAAAAAAAA' } }] }] }),
    unreadable('messages[0].content[1].image_url'),
  );
  await assert.rejects(
    client.responses.create({ model: 'agent', input: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'input_image', image_url: 'https://10.1.2.3/a.png', detail: 'auto' }] }] }),
    unreadable('input[1].content[0].image_url'),
  );
  // A flagged text beside an image: the message is named, as before.
  await assert.rejects(
    client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'text', text: THREAT }, { type: 'image_url', image_url: { url: drawing } }] }] }),
    (e: any) => e.status === 400 && e.error?.code === 'content_flagged' && e.error?.param === 'messages[0].content',
  );
  const after = (await server.admin('GET', `/accounts/${account.id}`)).body as { credits: number };
  assert.ok(after.credits < 10, 'the two that passed ran');

  // A key without the switch: the image goes to the model unread by moderation.
  const { key: plain } = await server.createKey({});
  const r = await server.openai(plain).chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAAAAAAAAAAAAAAAAAAAAAA' } }] }] });
  assert.equal(r.object, 'chat.completion');
});

test('files a message names by id are moderated with it: a text file with a threat is refused, a clean one passes', async () => {
  const account = await server.createAccount(10);
  const { key } = await server.createKey({ account_id: account.id, permissions: { moderate: true } });
  const client = server.openai(key);
  const threat = await client.files.create({ file: await toFile(Buffer.from(`Meeting notes.\n${THREAT}\n`), 'notes.txt'), purpose: 'user_data' });
  const clean = await client.files.create({ file: await toFile(Buffer.from('Meeting notes: the budget was approved.'), 'clean.txt'), purpose: 'user_data' });
  const flagged = (param: string) => (e: any) => e.status === 400 && e.error?.code === 'content_flagged' && e.error?.param === param;
  await assert.rejects(
    client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarize this.' }, { type: 'file', file: { file_id: threat.id } }] }] }),
    flagged('messages[0].content'),
  );
  await assert.rejects(
    client.responses.create({ model: 'agent', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Summarize this.' }, { type: 'input_file', file_id: threat.id }] }] }),
    flagged('input[0].content'),
  );
  const ok = await client.chat.completions.create({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarize this.' }, { type: 'file', file: { file_id: clean.id } }] }] });
  assert.equal(ok.object, 'chat.completion');
  const r = await client.responses.create({ model: 'agent', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Summarize this.' }, { type: 'input_file', file_id: clean.id }] }] });
  assert.equal(r.status, 'completed');
});
