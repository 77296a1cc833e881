// The image_generation tool of /v1/responses with the official openai SDK on the offline
// engine: an image_generation_call item (id, status, result: a base64 PNG of the size
// the tool asks for), the response.image_generation_call.* events in the reference's
// order (in_progress, generating, completed; no partial images), each checked against
// its reference schema; the streamed response and the stored one alike; the tool's
// limited and refused members; the Image generation switch; and the assistant's own loop
// drawing when asked with no tools (agent tools and Image generation switches).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream, validateAgainst, validateResponseObject } from './event-checks.test-support.ts';

let server: TestServer;
let client: OpenAI;
let key: string;
before(async () => {
  server = await startTestServer({ IMAGE_PRICE_STANDARD: '0.04' });
  key = (await server.createKey({ permissions: { image_generation: true, agent_tools: true } })).key;
  client = server.openai(key, { timeout: 120_000 });
});
after(() => server.close());

async function size(b64: string): Promise<[number, number, string]> {
  const meta = await sharp(Buffer.from(b64, 'base64')).metadata();
  return [meta.width!, meta.height!, meta.format!];
}

test('a hosted image_generation tool: an image_generation_call with a base64 PNG of the size asked, then the answer; the image charged', async () => {
  const r = (await client.responses.create({ model: 'agent', input: 'Draw a red boat on the ocean at sunset', tools: [{ type: 'image_generation', size: '512x384', quality: 'low' }] })) as any;
  validateResponseObject(r);
  const call = r.output.find((i: any) => i.type === 'image_generation_call');
  assert.ok(call, JSON.stringify(r.output.map((i: any) => i.type)));
  validateAgainst('ImageGenToolCall', call);
  assert.match(call.id, /^ig_/);
  assert.equal(call.status, 'completed');
  assert.deepEqual(await size(call.result), [512, 384, 'png']);
  assert.ok(r.output.at(-1).type === 'message' && r.output_text.length > 0);
  // 0.04 USD x 512 x 384 / 1024^2 = 0.0075 USD = 0.75 credits, besides the model's tokens.
  assert.ok(r.svc > 0.75, String(r.svc));
});

test('streamed: the reference events in order, each valid; the stored response is the streamed one', async () => {
  const events: any[] = [];
  for await (const e of await client.responses.create({ model: 'agent', input: 'Paint three yellow stars at night', tools: [{ type: 'image_generation', size: '256x256' }], stream: true })) events.push(e);
  const final = checkStream(events);
  const index = final.output.findIndex((i: any) => i.type === 'image_generation_call');
  assert.ok(index >= 0);
  const mine = events.filter((e) => e.output_index === index).map((e) => e.type);
  assert.deepEqual(mine, ['response.output_item.added', 'response.image_generation_call.in_progress', 'response.image_generation_call.generating', 'response.image_generation_call.completed', 'response.output_item.done']);
  assert.equal(events.some((e) => e.type === 'response.image_generation_call.partial_image'), false);
  const added = events.find((e) => e.type === 'response.output_item.added' && e.output_index === index);
  assert.deepEqual([added.item.status, added.item.result], ['in_progress', null]);
  const call = final.output[index];
  assert.deepEqual(await size(call.result), [256, 256, 'png']);
  const stored = (await client.responses.retrieve(final.id)) as any;
  assert.deepEqual(stored.output, final.output);
  // The stored response replayed as a stream sends the same item events.
  const replay = await server.fetch(`/v1/responses/${final.id}?stream=true`, { key });
  const text = await replay.text();
  assert.match(text, /response\.image_generation_call\.generating/);
  assert.ok(text.includes(call.result));
});

test('the same prompt and size draw the same image in the tool as on the endpoint', async () => {
  const r = (await client.responses.create({ model: 'agent', input: 'Draw a green tree', tools: [{ type: 'image_generation', size: '128x128' }] })) as any;
  const call = r.output.find((i: any) => i.type === 'image_generation_call');
  const direct = (await client.images.generate({ prompt: 'green tree', size: '128x128' as any })) as any;
  assert.equal(call.result, direct.data[0].b64_json);
});

test('the tool\'s members as the endpoints: limited, refused, a size outside the limits; the switch', async () => {
  const ask = (tool: Record<string, unknown>) => client.responses.create({ model: 'agent', input: 'Draw a cat', tools: [{ type: 'image_generation', ...tool } as never] });
  for (const [member, value] of [['partial_images', 2], ['background', 'transparent'], ['moderation', 'low'], ['action', 'edit'], ['output_format', 'webp'], ['output_compression', 50], ['input_fidelity', 'high'], ['input_image_mask', { file_id: 'file_x' }]] as const) {
    await assert.rejects(ask({ [member]: value }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && (e.error as any).code === 'unsupported_parameter' && (e.error as any).param === `tools[0].${member}`, member);
  }
  await assert.rejects(ask({ size: '9999x9999' }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && (e.error as any).param === 'tools[0].size');
  const ok = (await ask({ partial_images: 0, background: 'auto', moderation: 'auto', action: 'generate', model: 'gpt-image-1', size: 'auto' })) as any;
  assert.deepEqual(await size(ok.output.find((i: any) => i.type === 'image_generation_call').result), [1024, 1024, 'png']);
  const off = server.openai((await server.createKey({ permissions: { agent_tools: true } })).key);
  await assert.rejects(off.responses.create({ model: 'agent', input: 'Draw a cat', tools: [{ type: 'image_generation' }] }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 403);
});

test('the assistant\'s own loop draws when asked, with no tools; not without the switch, not when not asked', async () => {
  const r = (await client.responses.create({ model: 'agent', input: 'Please draw me a yellow sun over two houses' })) as any;
  const call = r.output.find((i: any) => i.type === 'image_generation_call');
  assert.ok(call, JSON.stringify(r.output.map((i: any) => i.type)));
  assert.equal(call.status, 'completed');
  assert.deepEqual(await size(call.result), [1024, 1024, 'png']);
  assert.equal(r.output.at(-1).type, 'message');
  const plain = (await client.responses.create({ model: 'agent', input: 'What is 2 + 3?' })) as any;
  assert.equal(plain.output.some((i: any) => i.type === 'image_generation_call'), false);
  const noSwitch = server.openai((await server.createKey({ permissions: { agent_tools: true } })).key);
  const without = (await noSwitch.responses.create({ model: 'agent', input: 'Please draw me a yellow sun' })) as any;
  assert.equal(without.output.some((i: any) => i.type === 'image_generation_call'), false);
});
