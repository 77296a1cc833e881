// The offline engine's images: drawn here (sharp, from SVG and raw pixels), decoded and
// classified on the image workers by the packaged classifier (nsfwjs MobileNetV2 on the
// TensorFlow.js wasm backend): a plain line drawing and a flat colour score low on
// `sexual`; the mapping from nsfwjs's classes; what is not an image, a damaged one, a
// format not taken and absurd dimensions are ImageUnreadable, the worker unharmed;
// `appliedTo` says which input types scored each category (sexual/minors never an image).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import sharp from 'sharp';
import { MODERATION_CATEGORIES } from '../../../contract/endpoints/moderations.ts';
import { ImageUnreadable, type ImageBytes, type PreparedImage } from '../../types.ts';
import { ImagePool } from './image-pool.ts';
import { MODEL_SIZE, NSFW_CLASSES, sniffImage } from './image-worker.ts';
import { createOfflineModeration, imageSexualScore } from './offline-moderation.ts';
import { flatColourJpeg, lineDrawingPng, pngClaiming, svg } from './test-images.test-support.ts';

// The first image starts a worker and loads the model: generous, never timed.
const SLOW = { timeout: 180_000 };
const signal = new AbortController().signal;

const pool = new ImagePool({ workers: 1 });
const bytes = (b: Buffer): ImageBytes => ({ bytes: b });
const base64 = (b: Buffer): ImageBytes => ({ base64: Buffer.from(b.toString('base64'), 'latin1') });

test('the mapping: Porn and Hentai count in full, Sexy for 0.4, Drawing and Neutral not at all', () => {
  const c = (o: Partial<Record<(typeof NSFW_CLASSES)[number], number>>) => ({ Drawing: 0, Hentai: 0, Neutral: 0, Porn: 0, Sexy: 0, ...o });
  assert.equal(imageSexualScore(c({ Neutral: 1 })), 0);
  assert.equal(imageSexualScore(c({ Drawing: 1 })), 0);
  assert.equal(imageSexualScore(c({ Porn: 0.9, Neutral: 0.1 })), 0.9);
  assert.equal(imageSexualScore(c({ Hentai: 0.7, Drawing: 0.3 })), 0.7);
  assert.ok(Math.abs(imageSexualScore(c({ Sexy: 1 })) - 0.4) < 1e-9, 'only suggestive: under the default threshold');
  assert.ok(imageSexualScore(c({ Porn: 0.2, Sexy: 0.8 })) > 0.5);
});

test('sniffing: PNG, JPEG, GIF and WebP by their first bytes; anything else is not an image', async () => {
  assert.equal(sniffImage(await lineDrawingPng()), 'png');
  assert.equal(sniffImage(await flatColourJpeg()), 'jpeg');
  assert.equal(sniffImage(await sharp(await lineDrawingPng()).gif().toBuffer()), 'gif');
  assert.equal(sniffImage(await sharp(await lineDrawingPng()).webp().toBuffer()), 'webp');
  assert.equal(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), null);
  assert.equal(sniffImage(Buffer.from('hello')), null);
});

test('a plain line drawing and a flat colour, decoded and classified on the worker, score low', SLOW, async () => {
  for (const [name, image] of [
    ['line drawing (PNG, as bytes)', bytes(await lineDrawingPng())],
    ['line drawing (PNG, as base64)', base64(await lineDrawingPng())],
    ['flat colour (JPEG)', bytes(await flatColourJpeg())],
    ['line drawing (WebP)', bytes(await sharp(await lineDrawingPng()).webp().toBuffer())],
    ['line drawing (GIF)', bytes(await sharp(await lineDrawingPng()).gif().toBuffer())],
  ] as const) {
    const decoded = await pool.decode(image, signal);
    assert.equal(decoded.width, MODEL_SIZE);
    assert.equal(decoded.height, MODEL_SIZE);
    assert.equal(decoded.pixels.length, MODEL_SIZE * MODEL_SIZE * 3);
    const { classes } = await pool.classify(decoded, signal);
    const sum = NSFW_CLASSES.reduce((n, c) => n + classes[c], 0);
    assert.ok(Math.abs(sum - 1) < 1e-3, `${name}: the five classes are probabilities (sum ${sum})`);
    const score = imageSexualScore(classes);
    assert.ok(score < 0.1, `${name}: sexual ${score} (${JSON.stringify(classes)})`);
    assert.ok(classes.Drawing + classes.Neutral > 0.9, `${name}: ${JSON.stringify(classes)}`);
  }
  assert.equal(pool.stats.workers, 1, 'one worker, which loaded the model once');
});

test('unreadable: not an image, bad base64, SVG, a damaged PNG, absurd dimensions; the worker carries on', SLOW, async () => {
  const png = await lineDrawingPng();
  const cases: [string, ImageBytes, RegExp][] = [
    ['text', bytes(Buffer.from('hello, world')), /not a PNG, JPEG, WebP or GIF/],
    ['SVG', bytes(svg('<circle cx="5" cy="5" r="4"/>')), /not a PNG, JPEG, WebP or GIF/],
    ['bad base64', { base64: Buffer.from('iVBORw0KGgo!!!!', 'latin1') }, /not valid base64/],
    ['cut short', bytes(png.subarray(0, 60)), /not a readable PNG/],
    ['damaged', bytes(Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 7), png.subarray(240)])), /not a readable PNG/],
    ['60000 x 60000', bytes(pngClaiming(60_000, 60_000)), /60000 x 60000 pixels; at most 50 megapixels/],
  ];
  for (const [name, image, message] of cases) {
    await assert.rejects(pool.decode(image, signal), (e: unknown) => e instanceof ImageUnreadable && message.test(e.message), name);
  }
  const after = await pool.decode(bytes(png), signal);
  assert.equal(after.pixels.length, MODEL_SIZE * MODEL_SIZE * 3);
  assert.equal(pool.stats.workers, 1);
});

test('the engine: image-only input scores sexual on the image only; text and image, the max of both; sexual/minors never from an image', SLOW, async () => {
  const engine = createOfflineModeration({ imageWorkers: 1 });
  const prepared: PreparedImage = await engine.prepareImage!(bytes(await lineDrawingPng()), signal);
  const [imageOnly, both, textOnly] = await engine.moderate(
    {
      model: 'omni-moderation-latest',
      inputs: [
        { texts: [], images: ['data:'], prepared: [prepared] },
        { texts: ['I am going to kill you.'], images: ['data:'], prepared: [prepared] },
        { texts: ['hello'], images: [] },
      ],
    },
    signal,
  );
  for (const c of MODERATION_CATEGORIES) {
    assert.deepEqual(imageOnly!.appliedTo[c], c === 'sexual' ? ['image'] : [], c);
    assert.deepEqual(both!.appliedTo[c], c === 'sexual' ? ['text', 'image'] : ['text'], c);
    assert.deepEqual(textOnly!.appliedTo[c], ['text'], c);
  }
  assert.ok(imageOnly!.scores.sexual! < 0.1);
  assert.ok((imageOnly!.scores['sexual/minors'] ?? 0) < 0.001, 'nothing scored it');
  assert.ok(both!.scores.violence! >= 0.5, 'the text still scores');
  assert.ok(imageOnly!.fired!.some((f) => f.category === 'sexual' && /nsfwjs/.test(f.rule)));
  await assert.rejects(engine.moderate({ model: 'omni-moderation-latest', inputs: [{ texts: [], images: ['data:'] }] }, signal), /without being prepared/);
});
