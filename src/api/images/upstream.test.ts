// /v1/images/* through an OpenAI-compatible upstream (UPSTREAM_IMAGES=upstream), end to
// end with the openai SDK against a double that records the raw requests: generations go
// as JSON, edits and variations as multipart forms, each with the mapped model
// (UPSTREAM_IMAGE_MODEL) and exactly the fields the client sent (no response_format,
// which is without effect); a `url` answer is passed through, the upstream's usage kept;
// a failure is 502 upstream_error with nothing charged. Without UPSTREAM_IMAGES the
// offline engine answers even with an upstream configured.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';

interface Received {
  url: string;
  contentType: string;
  authorization: string | undefined;
  body: Buffer;
}

let received: Received[] = [];
let answer: (req: Received, res: ServerResponse) => void;
let double: ReturnType<typeof createServer>;
let baseUrl: string;
let server: TestServer;
let offlineServer: TestServer;
let key: string;

const TINY_PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

before(async () => {
  double = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { url: req.url ?? '', contentType: String(req.headers['content-type']), authorization: req.headers.authorization, body: Buffer.concat(chunks) };
      received.push(r);
      answer(r, res);
    });
  });
  await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(double.address() as AddressInfo).port}/v1`;
  const env = { UPSTREAM_BASE_URL: baseUrl, UPSTREAM_API_KEY: 'sk-upstream-secret', UPSTREAM_MODEL_AGENT: 'upstream-chat', UPSTREAM_MAX_RETRIES: '0' };
  server = await startTestServer({ ...env, UPSTREAM_IMAGES: 'upstream', UPSTREAM_IMAGE_MODEL: 'gpt-image-1-mapped' });
  offlineServer = await startTestServer(env);
  key = (await server.createKey({ permissions: { image_generation: true } })).key;
});
after(async () => {
  await server.close();
  await offlineServer.close();
  double.closeAllConnections();
  await new Promise<void>((resolve) => double.close(() => resolve()));
});

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** The text fields and files of a multipart body (enough for what the service sends). */
function formOf(r: Received): { fields: Record<string, string>; files: Record<string, { filename: string; type: string; bytes: Buffer }> } {
  const boundary = /boundary=(.+)$/.exec(r.contentType)![1]!;
  const fields: Record<string, string> = {};
  const files: Record<string, { filename: string; type: string; bytes: Buffer }> = {};
  const text = r.body.toString('latin1');
  for (const part of text.split(`--${boundary}`).slice(1, -1)) {
    const [head, ...rest] = part.replace(/^\r\n/, '').split('\r\n\r\n');
    const content = rest.join('\r\n\r\n').replace(/\r\n$/, '');
    const name = /name="([^"]*)"/.exec(head!)![1]!;
    const filename = /filename="([^"]*)"/.exec(head!)?.[1];
    if (filename !== undefined) files[name] = { filename, type: /Content-Type: (.+)/i.exec(head!)![1]!.trim(), bytes: Buffer.from(content, 'latin1') };
    else fields[name] = content;
  }
  return { fields, files };
}

test('a generation goes upstream as JSON with the mapped model and exactly the fields sent; its b64_json and usage come back, priced per image', async () => {
  received = [];
  answer = (_r, res) => json(res, 200, { created: 1, data: [{ b64_json: TINY_PNG_B64 }], usage: { input_tokens: 7, output_tokens: 4160, total_tokens: 4167, input_tokens_details: { text_tokens: 7, image_tokens: 0 } } });
  const client = server.openai(key);
  const body = (await client.images.generate({ prompt: 'a red fox', model: 'dall-e-3', response_format: 'b64_json', size: '1536x1024', quality: 'high', n: 1, user: 'u-1', background: 'auto', moderation: 'auto' } as any)) as any;
  assert.equal(received.length, 1);
  const sent = received[0]!;
  assert.equal(sent.url, '/v1/images/generations');
  assert.equal(sent.authorization, 'Bearer sk-upstream-secret');
  assert.match(sent.contentType, /application\/json/);
  assert.deepEqual(JSON.parse(sent.body.toString('utf8')), { prompt: 'a red fox', model: 'gpt-image-1-mapped', size: '1536x1024', quality: 'high', n: 1, user: 'u-1', background: 'auto', moderation: 'auto' });
  validateAgainst('ImagesResponse', body);
  assert.equal(body.data[0].b64_json, TINY_PNG_B64);
  assert.deepEqual(body.usage, { input_tokens: 7, output_tokens: 4160, total_tokens: 4167, input_tokens_details: { text_tokens: 7, image_tokens: 0 } });
  // IMAGE_PRICE_HIGH 0.17 USD per 1024 x 1024, 1.5 times the pixels, 100 credits a dollar.
  assert.ok(Math.abs(body.svc - 17 * 1.5) < 1e-5, String(body.svc));
});

test('an edit goes upstream as a multipart form: the image as uploaded, the mapped model, the fields sent; a url answer is passed through', async () => {
  received = [];
  answer = (_r, res) => json(res, 200, { created: 1, data: [{ url: 'https://images.example.com/out.png', revised_prompt: 'a fox, revised' }] });
  const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#336699' } }).png().toBuffer();
  const body = (await server.openai(key).images.edit({ image: await toFile(png, 'fox.png', { type: 'image/png' }), prompt: 'make it orange', size: '1024x1024', model: 'x', response_format: 'url' } as any)) as any;
  const sent = received[0]!;
  assert.equal(sent.url, '/v1/images/edits');
  const form = formOf(sent);
  assert.deepEqual(form.fields, { prompt: 'make it orange', size: '1024x1024', model: 'gpt-image-1-mapped' });
  assert.equal(form.files.image!.type, 'image/png');
  assert.equal(form.files.image!.filename, 'fox.png');
  assert.ok(form.files.image!.bytes.equals(png));
  validateAgainst('ImagesResponse', body);
  assert.deepEqual(body.data, [{ url: 'https://images.example.com/out.png', revised_prompt: 'a fox, revised' }]);
});

test('a variation goes upstream as a multipart form; an upstream failure is 502 upstream_error and charges nothing', async () => {
  received = [];
  answer = (_r, res) => json(res, 200, { created: 1, data: [{ b64_json: TINY_PNG_B64 }] });
  const gif = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#aa2200' } }).gif().toBuffer();
  const client = server.openai(key);
  const body = (await client.images.createVariation({ image: await toFile(gif, 'v.gif'), size: '256x256', n: 1 } as any)) as any;
  const form = formOf(received[0]!);
  assert.equal(received[0]!.url, '/v1/images/variations');
  assert.deepEqual(form.fields, { size: '256x256', n: '1', model: 'gpt-image-1-mapped' });
  assert.equal(form.files.image!.type, 'image/gif');
  assert.equal(body.data[0].b64_json, TINY_PNG_B64);

  answer = (_r, res) => json(res, 500, { error: { message: 'the image model is down', type: 'server_error' } });
  const k = await server.createKey({ permissions: { image_generation: true } });
  const account = k.account_id;
  await assert.rejects(server.openai(k.key).images.generate({ prompt: 'a sun' }), (e: unknown) => e instanceof OpenAI.APIError && e.status === 502 && (e.error as { code?: string }).code === 'upstream_error');
  const balance = (await server.admin('GET', `/accounts/${account}`)).body as { credits?: number; balance?: number };
  assert.equal(balance.credits ?? balance.balance, 100);
});

test('with an upstream but without UPSTREAM_IMAGES=upstream the offline engine answers', async () => {
  received = [];
  const k = (await offlineServer.createKey({ permissions: { image_generation: true } })).key;
  const body = (await offlineServer.openai(k).images.generate({ prompt: 'a sun', size: '128x128' })) as any;
  assert.equal(received.length, 0);
  const meta = await sharp(Buffer.from(body.data[0].b64_json, 'base64')).metadata();
  assert.deepEqual([meta.width, meta.height], [128, 128]);
});
