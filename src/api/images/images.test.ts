// POST /v1/images/generations, /edits, /variations with the official openai SDK on the
// offline engine: the reference's ImagesResponse (validated against its schema) with
// `svc`; b64_json decodes to a PNG of exactly each size asked; the same request gives the
// same bytes and another prompt other bytes; each limited, refused and without-effect row
// of SPEC's three tables; edits of PNG, JPEG, WebP and GIF change the picture; an upload
// over 8 MB or that is not an image is refused naming `image`; the Image generation
// switch; the price held and charged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { validateAgainst } from '../responses/event-checks.test-support.ts';

let server: TestServer;
let key: string;
let client: OpenAI;
before(async () => {
  server = await startTestServer({ IMAGE_PRICE_STANDARD: '0.04', IMAGE_PRICE_HD: '0.08' });
  key = (await server.createKey({ permissions: { image_generation: true } })).key;
  client = server.openai(key, { timeout: 120_000 });
});
after(() => server.close());

const any = (v: unknown) => v as any;

/** The PNG of a response, with its size. */
async function decoded(body: { data?: { b64_json?: string }[] }): Promise<{ bytes: Buffer; width: number; height: number; format: string }> {
  const b64 = body.data?.[0]?.b64_json;
  assert.ok(b64, 'b64_json');
  const bytes = Buffer.from(b64, 'base64');
  const meta = await sharp(bytes).metadata();
  return { bytes, width: meta.width!, height: meta.height!, format: meta.format! };
}

/** A small photo-like test picture in each upload format. */
async function picture(format: 'png' | 'jpeg' | 'webp' | 'gif', width = 320, height = 240): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#3a7bd5"/><circle cx="${width / 3}" cy="${height / 2}" r="${height / 4}" fill="#f6d33c"/><rect x="${width / 2}" y="${height / 3}" width="${width / 3}" height="${height / 2}" fill="#2a9d3f"/></svg>`;
  return sharp(Buffer.from(svg)).toFormat(format).toBuffer();
}

/** Mean absolute difference of two images' pixels at a common small size (0..255). */
async function difference(a: Buffer, b: Buffer): Promise<number> {
  const small = (x: Buffer) => sharp(x).flatten({ background: '#fff' }).resize(64, 64, { fit: 'fill' }).removeAlpha().raw().toBuffer();
  const [pa, pb] = await Promise.all([small(a), small(b)]);
  let sum = 0;
  for (let i = 0; i < pa.length; i++) sum += Math.abs(pa[i]! - pb[i]!);
  return sum / pa.length;
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string; param: string | null; type: string }> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof OpenAI.APIError, String(err));
    const e = err.error as { code: string; param: string | null; type: string };
    return { status: err.status, code: e.code, param: e.param, type: e.type };
  }
  assert.fail('expected a refusal');
}

describe('generations', () => {
  test('the reference body with svc; b64_json is a PNG of exactly each size asked; the price charged', async () => {
    for (const size of ['1024x1024', '1536x1024', '1024x1536', '256x256', '1792x1024', '640x360']) {
      const res = await client.images.generate({ prompt: 'three red balloons over a house at sunset', size: any(size) }).withResponse();
      const body = any(res.data);
      validateAgainst('ImagesResponse', body);
      assert.equal(typeof body.created, 'number');
      assert.equal(body.data.length, 1);
      assert.equal(body.output_format, 'png');
      assert.ok(body.usage.output_tokens > 0 && body.usage.input_tokens > 0);
      assert.equal(body.usage.total_tokens, body.usage.input_tokens + body.usage.output_tokens);
      const [w, h] = size.split('x').map(Number);
      const img = await decoded(body);
      assert.equal(img.format, 'png');
      assert.deepEqual([img.width, img.height], [w, h], size);
      // IMAGE_PRICE_STANDARD 0.04 USD per 1024 x 1024, 100 credits a dollar.
      assert.ok(Math.abs(body.svc - (4 * w! * h!) / (1024 * 1024)) < 1e-5, `${size}: ${body.svc}`);
    }
    const auto = await client.images.generate({ prompt: 'a cat', size: 'auto' });
    assert.deepEqual([(await decoded(any(auto))).width, (await decoded(any(auto))).height], [1024, 1024]);
    assert.equal(any(auto).svc, 4);
  });

  test('the same request gives the same bytes; another prompt, size or quality other bytes', async () => {
    const ask = (prompt: string, extra: Record<string, unknown> = {}) => client.images.generate({ prompt, size: '512x512', ...extra } as any);
    const a = await decoded(any(await ask('two cats and a dog in a field with a yellow sun')));
    const b = await decoded(any(await ask('two cats and a dog in a field with a yellow sun')));
    assert.ok(a.bytes.equals(b.bytes));
    const other = await decoded(any(await ask('a blue boat on the ocean at night')));
    assert.ok(!a.bytes.equals(other.bytes));
    assert.ok((await difference(a.bytes, other.bytes)) > 10, 'another prompt draws another picture');
    const hd = await decoded(any(await ask('two cats and a dog in a field with a yellow sun', { quality: 'hd' })));
    assert.ok(!a.bytes.equals(hd.bytes));
  });

  test('quality: standard, hd, high and max are taken, priced by IMAGE_PRICE_*', async () => {
    for (const [quality, svc] of [['standard', 4], ['hd', 8], ['high', 17], ['max', 25]] as const) {
      const body = any(await client.images.generate({ prompt: 'a tree', quality: any(quality) }));
      validateAgainst('ImagesResponse', body);
      assert.equal(body.svc, svc, quality);
    }
  });

  test('limited fields: the one allowed value passes, any other is refused naming the field', async () => {
    const ok = any(await client.images.generate({ prompt: 'a star', n: 1, background: 'auto', moderation: 'auto', partial_images: 0, stream: false } as any));
    assert.ok(ok.data[0].b64_json);
    for (const [field, value] of [['n', 2], ['background', 'transparent'], ['moderation', 'low'], ['partial_images', 1], ['stream', true]] as const) {
      const res = await server.fetch('/v1/images/generations', { method: 'POST', key, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'a star', [field]: value }) });
      const { error } = (await res.json()) as { error: { code: string; param: string } };
      assert.deepEqual([res.status, error.code, error.param], [400, 'unsupported_parameter', field], field);
    }
  });

  test('refused fields: style, output_format, output_compression', async () => {
    for (const [field, value] of [['style', 'vivid'], ['output_format', 'png'], ['output_compression', 50]] as const) {
      const r = await refusal(client.images.generate({ prompt: 'a star', [field]: value } as any));
      assert.deepEqual([r.status, r.code, r.param], [400, 'unsupported_parameter', field], field);
    }
  });

  test('model and response_format are without effect: the same bytes', async () => {
    const plain = await decoded(any(await client.images.generate({ prompt: 'a red heart', size: '256x256' })));
    const withThem = await decoded(any(await client.images.generate({ prompt: 'a red heart', size: '256x256', model: 'dall-e-3', response_format: 'url' })));
    assert.ok(plain.bytes.equals(withThem.bytes));
  });

  test('the prompt is up to 4000 characters; a size outside the limits is refused naming size', async () => {
    assert.ok(any(await client.images.generate({ prompt: 'a moon '.repeat(571).slice(0, 4000), size: '64x64' })).data[0].b64_json);
    const long = await refusal(client.images.generate({ prompt: 'x'.repeat(4001) }));
    assert.deepEqual([long.status, long.param], [400, 'prompt']);
    for (const size of ['4000x4000', '8x8', '3840x3840', 'big']) {
      const r = await refusal(client.images.generate({ prompt: 'a moon', size: any(size) }));
      assert.deepEqual([r.status, r.param], [400, 'size'], size);
    }
  });
});

describe('edits', () => {
  test('PNG, JPEG, WebP and GIF are judged by content and the picture changes, at exactly the size asked', async () => {
    for (const format of ['png', 'jpeg', 'webp', 'gif'] as const) {
      const input = await picture(format);
      // The file name and type say PNG whatever the content: the bytes decide.
      const res = any(await client.images.edit({ image: await toFile(input, 'upload.png', { type: 'image/png' }), prompt: 'make it purple with two white clouds', size: any('512x384') }));
      validateAgainst('ImagesResponse', res);
      const out = await decoded(res);
      assert.deepEqual([out.format, out.width, out.height], ['png', 512, 384], format);
      assert.ok((await difference(input, out.bytes)) > 8, `${format}: the edit changes the picture`);
      assert.ok(res.usage.input_tokens_details.image_tokens > 0);
    }
  });

  test('size auto keeps the upload\'s size; the same edit gives the same bytes; a prompt without colours or objects still changes it', async () => {
    const input = await picture('jpeg', 300, 200);
    const edit = async (prompt: string) => decoded(any(await client.images.edit({ image: await toFile(input, 'a.jpg'), prompt })));
    const a = await edit('add a red car');
    assert.deepEqual([a.width, a.height], [300, 200]);
    const b = await edit('add a red car');
    assert.ok(a.bytes.equals(b.bytes));
    const c = await edit('make it nicer');
    assert.ok(!c.bytes.equals(a.bytes));
    assert.ok((await difference(input, c.bytes)) > 8);
  });

  test('limited, refused and without-effect fields', async () => {
    const input = await picture('png');
    const edit = async (extra: Record<string, unknown>) => client.images.edit({ image: await toFile(input, 'a.png'), prompt: 'a sun', size: any('64x64'), ...extra } as any);
    const ok = any(await edit({ n: 1, background: 'auto', partial_images: 0, stream: false }));
    const plain = await decoded(ok);
    const noEffect = await decoded(any(await edit({ model: 'gpt-image-1', response_format: 'url' })));
    assert.ok(plain.bytes.equals(noEffect.bytes));
    for (const [field, value] of [['n', 2], ['background', 'transparent'], ['partial_images', 2], ['stream', true], ['input_fidelity', 'high'], ['output_format', 'webp'], ['output_compression', 80]] as const) {
      const r = await refusal(edit({ [field]: value }));
      assert.deepEqual([r.status, r.code, r.param], [400, 'unsupported_parameter', field], field);
    }
    const mask = await refusal(edit({ mask: await toFile(input, 'mask.png') }));
    assert.deepEqual([mask.status, mask.code, mask.param], [400, 'unsupported_parameter', 'mask']);
  });

  test('an upload over 8 MB, or one that is not an image, is refused naming image, with nothing charged', async () => {
    const tooBig = await refusal(client.images.edit({ image: await toFile(Buffer.alloc(8 * 1024 * 1024 + 1, 1), 'big.png'), prompt: 'a sun' }));
    assert.deepEqual([tooBig.status, tooBig.param], [400, 'image']);
    const text = await refusal(client.images.edit({ image: await toFile(Buffer.from('not an image at all'), 'x.png', { type: 'image/png' }), prompt: 'a sun' }));
    assert.deepEqual([text.status, text.type, text.param], [400, 'invalid_request_error', 'image']);
    // A PNG signature with nothing readable after it.
    const broken = await refusal(client.images.edit({ image: await toFile(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]), 'x.png'), prompt: 'a sun' }));
    assert.deepEqual([broken.status, broken.param], [400, 'image']);
    // A JPEG cut short: its header reads, its pixels do not.
    const noise = Buffer.alloc(300 * 200 * 3, 7).map((_, i) => (i * 2654435761) >>> 24);
    const jpeg = await sharp(noise, { raw: { width: 300, height: 200, channels: 3 } }).jpeg().toBuffer();
    const cut = await refusal(client.images.edit({ image: await toFile(jpeg.subarray(0, Math.floor(jpeg.length * 0.6)), 'cut.jpg'), prompt: 'a sun' }));
    assert.deepEqual([cut.status, cut.param], [400, 'image']);
    // An SVG (libvips reads it; the endpoint does not).
    const svg = await refusal(client.images.edit({ image: await toFile(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 'x.svg'), prompt: 'a sun' }));
    assert.deepEqual([svg.status, svg.param], [400, 'image']);
  });
});

describe('variations', () => {
  test('a variation recomposes and recolours the upload, at the size asked; the same upload the same bytes; n limited; model and response_format without effect', async () => {
    const input = await picture('webp', 400, 300);
    const vary = async (extra: Record<string, unknown> = {}) => client.images.createVariation({ image: await toFile(input, 'v.webp'), size: any('256x256'), ...extra } as any);
    const a = any(await vary());
    validateAgainst('ImagesResponse', a);
    const img = await decoded(a);
    assert.deepEqual([img.width, img.height], [256, 256]);
    assert.ok((await difference(input, img.bytes)) > 8);
    const b = await decoded(any(await vary({ n: 1, model: 'dall-e-2', response_format: 'b64_json' })));
    assert.ok(img.bytes.equals(b.bytes));
    const n = await refusal(vary({ n: 2 }));
    assert.deepEqual([n.status, n.code, n.param], [400, 'unsupported_parameter', 'n']);
    const auto = await decoded(any(await client.images.createVariation({ image: await toFile(input, 'v.webp') })));
    assert.deepEqual([auto.width, auto.height], [400, 300]);
  });
});

test('without the Image generation switch: 403 on every image endpoint', async () => {
  const off = server.openai((await server.createKey({ permissions: { embeddings: true } })).key);
  const input = await picture('png');
  for (const call of [
    () => off.images.generate({ prompt: 'a sun' }),
    async () => off.images.edit({ image: await toFile(input, 'a.png'), prompt: 'a sun' }),
    async () => off.images.createVariation({ image: await toFile(input, 'a.png') }),
  ]) {
    const r = await refusal(call());
    assert.deepEqual([r.status, r.type, r.code], [403, 'permission_error', 'model_not_allowed']);
  }
});

test('an account without credits for the image is refused 429 before anything is drawn', async () => {
  const poor = await server.createAccount(0.01);
  const k = (await server.createKey({ account_id: poor.id, permissions: { image_generation: true } })).key;
  const r = await refusal(server.openai(k).images.generate({ prompt: 'a sun' }));
  assert.deepEqual([r.status, r.code], [429, 'insufficient_quota']);
});
