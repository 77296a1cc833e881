// The scrubber finds a configured secret in every spelling an echo may give it (as is,
// after Bearer, in a JSON string, URL- or form-encoded, cut short) and leaves other text
// alone; outside text is cleaned of control characters and bounded without cutting a
// secret in half.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outsideText, REDACTED, SecretScrubber, spellingsOf } from './secrets.ts';

const KEY = 'sk-or/v1+Key=é"42\\x';

describe('SecretScrubber', () => {
  const scrubber = new SecretScrubber([KEY, undefined, 'short']);

  it('every spelling of a secret an echo may use', () => {
    const json = JSON.stringify(KEY).slice(1, -1);
    const spellings = [
      KEY,
      `Bearer ${KEY}`,
      json,
      json.replaceAll('/', '\\/'),
      json.replace('é', '\\u00e9'),
      json.replace('é', '\\u00E9'),
      JSON.stringify(json).slice(1, -1),
      encodeURIComponent(KEY),
      encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      encodeURIComponent(`Bearer ${KEY}`).replaceAll('%20', '+'),
    ];
    for (const form of spellings) {
      const out = scrubber.scrub(`before ${form} after`);
      assert.ok(out.startsWith('before ') && out.endsWith(' after'), out);
      assert.ok(out.includes(REDACTED), `${form} -> ${out}`);
      assert.ok(!out.includes('Key=') && !out.includes('Key%3D') && !out.includes('Key%3d') && !out.includes('42'), `${form} -> ${out}`);
    }
    assert.ok(spellingsOf('plain-token-123').length === 1, 'a plain token has one spelling');
  });

  it('a secret cut short by the echo (8 characters or more, then the end or an ellipsis)', () => {
    assert.equal(scrubber.scrub(`key ${KEY.slice(0, 10)}`), `key ${REDACTED}`);
    assert.equal(scrubber.scrub(`key ${KEY.slice(0, 9)}… and more`), `key ${REDACTED}… and more`);
    assert.equal(scrubber.scrub(`key ${KEY.slice(0, 12)}...`), `key ${REDACTED}...`);
  });

  it('leaves other text alone: a shared beginning, short values, ordinary words', () => {
    const url = new SecretScrubber(['https://example.test']);
    assert.equal(url.scrub('see https://docs.example.org/errors'), 'see https://docs.example.org/errors');
    assert.equal(scrubber.scrub('a short answer'), 'a short answer', 'secrets under 6 characters are not looked for');
    assert.equal(scrubber.scrub('Missing Bearer token'), 'Missing Bearer token');
    assert.equal(new SecretScrubber().scrub('nothing configured'), 'nothing configured');
  });

  it('any Bearer or Basic credential, even one it was not told of', () => {
    assert.equal(new SecretScrubber().scrub('authorization: Bearer abc.DEF-123_xyz, basic dXNlcjpwYXNz=='), `authorization: Bearer ${REDACTED}, basic ${REDACTED}`);
  });

  it('is linear: a long text of near misses', () => {
    const many = new SecretScrubber([KEY, 'x'.repeat(64), 'another-secret-value']);
    const text = `${KEY.slice(0, 8)}-`.repeat(20_000) + 'x'.repeat(63) + 'y';
    const t = performance.now();
    assert.equal(many.scrub(text), text);
    assert.ok(performance.now() - t < 1000, 'a generous bound');
  });
});

describe('outsideText', () => {
  const scrubber = new SecretScrubber([KEY]);

  it('removes control and format characters, turns line breaks into spaces, collapses spaces', () => {
    assert.equal(outsideText('a\u0000b\u001b[31mc\r\n\td\u2028e\u202ef  g\u200b', scrubber), 'ab[31mc d ef g');
  });

  it('bounds the text with an ellipsis, never cutting a surrogate pair', () => {
    const out = outsideText('x'.repeat(500), scrubber);
    assert.equal(out.length, 200);
    assert.ok(out.endsWith('…'));
    const emoji = outsideText(`${'x'.repeat(198)}😀😀`, scrubber, 200);
    assert.ok(!/[\ud800-\udbff]…$/.test(emoji), 'no lone high surrogate before the ellipsis');
    assert.ok(emoji.length <= 200);
  });

  it('scrubs before cutting, so no secret is left half across the bound', () => {
    const out = outsideText(`${'x'.repeat(190)} ${KEY} tail`, scrubber);
    assert.ok(!out.includes(KEY.slice(0, 4)), out);
  });

  it('scrubs a secret split by control characters', () => {
    assert.ok(!outsideText(`${KEY.slice(0, 5)}\u0000${KEY.slice(5)}`, scrubber).includes('Key'));
  });
});
