// POST /v1/moderations with image parts, through the official openai SDK, on images the
// test draws: scored by the packaged classifier (a plain line drawing scores low and is
// not flagged), `category_applied_input_types` exactly what scored each category, a
// text-and-image input scored on both; an https image fetched through the outbound guard
// (a local server the guard is told to allow, as tests may), and the refusals, each a
// 400 invalid_request_error naming the part: not an image, damaged, not base64, SVG, a
// private or plain-http address, an error status, too many images, a text-moderation model.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { MODERATION_CATEGORIES } from '../../contract/endpoints/moderations.ts';
import { dataUrl, flatColourJpeg, lineDrawingPng, svg } from '../../providers/inline/moderation/test-images.test-support.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';

// The first image starts a worker and loads the model: generous, never timed.
const SLOW = { timeout: 180_000 };

let server: TestServer;
let key: string;
let images: http.Server;
let imageOrigin: string;
let png: Buffer;
let jpeg: Buffer;

before(async () => {
  png = await lineDrawingPng();
  jpeg = await flatColourJpeg();
  images = http.createServer((req, res) => {
    if (req.url === '/drawing.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    else if (req.url === '/page.html') res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not an image</body></html>');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  const { port } = images.address() as AddressInfo;
  imageOrigin = `http://127.0.0.1:${port}`;
  // The guard lets this one local address through (plain http included): tests only.
  server = await startTestServer({ AGENT_API_OUTBOUND_ALLOW: `127.0.0.1:${port}`, AGENT_API_IMAGE_MODERATION_WORKERS: '1' });
  key = (await server.createKey({})).key;
});
after(async () => {
  await server.close();
  await new Promise((resolve) => images.close(resolve));
});

const image = (url: string) => ({ type: 'image_url' as const, image_url: { url } });

test('a plain line drawing alone: scored by the classifier, low, not flagged; sexual applied to the image, nothing else', SLOW, async () => {
  const res = await server.openai(key).moderations.create({ input: [image(dataUrl(png))] }).withResponse();
  const body = res.data as any;
  validateAgainst('CreateModerationResponse', body);
  assert.equal(body.model, 'omni-moderation-latest');
  assert.equal(body.results.length, 1);
  const [r] = body.results;
  assert.equal(r.flagged, false);
  assert.ok(r.category_scores.sexual < 0.1, `sexual ${r.category_scores.sexual}`);
  assert.equal(r.categories.sexual, false);
  for (const c of MODERATION_CATEGORIES) assert.deepEqual(r.category_applied_input_types[c], c === 'sexual' ? ['image'] : [], c);
  assert.equal(body.svc, 0);
});

test('text and an image (JPEG) in one input: one result; sexual on text and image, the rest on text; the text still flags', SLOW, async () => {
  const r = await server.openai(key).moderations.create({
    model: 'agent-moderation',
    input: [{ type: 'text', text: 'I am going to kill you.' }, image(dataUrl(jpeg, 'image/jpeg'))],
  });
  assert.equal(r.model, 'agent-moderation');
  assert.equal(r.results.length, 1);
  const [res] = r.results;
  assert.equal(res!.flagged, true);
  assert.equal(res!.categories.violence, true);
  assert.equal(res!.categories.sexual, false);
  for (const c of MODERATION_CATEGORIES) assert.deepEqual(res!.category_applied_input_types[c], c === 'sexual' ? ['text', 'image'] : ['text'], c);
  assert.deepEqual(res!.category_applied_input_types['sexual/minors'], ['text'], 'never from an image');
});

test('an image address fetched through the outbound guard is scored; one answering an error or a page is refused naming the part', SLOW, async () => {
  const client = server.openai(key);
  const r = await client.moderations.create({ model: 'omni-moderation-2024-09-26', input: [{ type: 'text', text: 'a diagram' }, image(`${imageOrigin}/drawing.png`)] });
  assert.equal(r.results[0]!.flagged, false);
  assert.ok(r.results[0]!.category_scores.sexual < 0.1);
  assert.deepEqual(r.results[0]!.category_applied_input_types.sexual, ['text', 'image']);
  await assert.rejects(client.moderations.create({ input: [image(`${imageOrigin}/missing.png`)] }), (e: any) => e.status === 400 && e.error?.param === 'input[0].image_url' && /answered 404/.test(e.error?.message));
  await assert.rejects(client.moderations.create({ input: [{ type: 'text', text: 'x' }, image(`${imageOrigin}/page.html`)] }), (e: any) => e.status === 400 && e.error?.param === 'input[1].image_url' && /not a PNG, JPEG, WebP or GIF/.test(e.error?.message));
});

test('refused, each a 400 invalid_request_error naming the part: what is not a readable image, or not an address the guard fetches', SLOW, async () => {
  const client = server.openai(key);
  const cases: [string, string, RegExp][] = [
    ['garbage base64', 'data:image/png;base64,AAAAAAAAAAAAAAAAAAAAAAAA', /not a PNG, JPEG, WebP or GIF/],
    ['a PNG cut short', dataUrl(png.subarray(0, png.length >> 1)), /not a readable PNG image/],
    ['bad base64 after a PNG header', `${dataUrl(png.subarray(0, 24))}!!!!`, /not valid base64/],
    ['not base64', 'data:image/png,%89PNG', /must be base64/],
    ['not an image type', `data:text/plain;base64,${png.toString('base64')}`, /text\/plain is not an image/],
    ['SVG', dataUrl(svg('<circle cx="5" cy="5" r="4"/>'), 'image/svg+xml'), /not a PNG, JPEG, WebP or GIF/],
    ['a private address', 'https://10.1.2.3/a.png', /cannot be fetched: 10\.1\.2\.3 is not a public address/],
    ['loopback by name', 'https://localhost/a.png', /cannot be fetched/],
    ['plain http', 'http://example.com/a.png', /Only https addresses/],
    ['not a URL', 'a picture of a cat', /not a valid URL/],
  ];
  for (const [name, url, message] of cases) {
    await assert.rejects(
      client.moderations.create({ input: [{ type: 'text', text: 'hello' }, image(dataUrl(png)), image(url)] }),
      (e: any) => e.status === 400 && e.error?.type === 'invalid_request_error' && e.error?.param === 'input[2].image_url' && message.test(e.error?.message),
      name,
    );
  }
  // More images than a request may carry: the first one too many is named.
  const many = Array.from({ length: 17 }, () => image(dataUrl(png)));
  await assert.rejects(client.moderations.create({ input: many }), (e: any) => e.status === 400 && e.error?.param === 'input[16].image_url' && /At most 16 images/.test(e.error?.message));
  // A text-moderation model scores text only, as before.
  await assert.rejects(client.moderations.create({ model: 'text-moderation-latest', input: [{ type: 'text', text: 'x' }, image(dataUrl(png))] }), (e: any) => e.status === 400 && e.error?.param === 'input[1]');
  // And the service still scores images afterwards.
  const r = await client.moderations.create({ input: [image(dataUrl(png))] });
  assert.equal(r.results[0]!.flagged, false);
});
