import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { countChatTokens, countTokens, endsOnCharBoundary, fallbackPieces, hasRankTable, pieceTokenDetails, toPieces, encodeText } from './tokens.ts';

const MIXED = 'Hello, wörld! 日本語のテキスト 🎉🎉 emoji 👩‍👩‍👧 and ’quotes’ — done.';

test('pieces are o200k tokens: same ids, same count as the tokenizer', () => {
  const pieces = toPieces(MIXED);
  assert.deepEqual(pieces.flatMap((p) => p.tokenIds), encode(MIXED));
  assert.equal(countTokens(MIXED), encode(MIXED).length);
  assert.equal(pieces.map((p) => p.text).join(''), MIXED);
});

test('no piece carries a broken character; split characters are grouped', () => {
  assert.ok(hasRankTable, 'gpt-tokenizer internals moved: the fallback path is in use');
  const pieces = toPieces(MIXED);
  for (const p of pieces) {
    assert.ok(!p.text.includes('\uFFFD'), `broken piece ${JSON.stringify(p.text)}`);
    assert.ok(p.text.length > 0);
  }
  // 🎉 is split over two o200k tokens: one piece must hold both.
  assert.ok(pieces.some((p) => p.tokenIds.length > 1 && p.text.includes('🎉')));
});

test('the public-API fallback also yields whole characters covering every token', () => {
  for (const text of [MIXED, 'plain ascii text', '🎉', '']) {
    const pieces = fallbackPieces(encodeText(text));
    assert.equal(pieces.map((p) => p.text).join(''), text);
    assert.deepEqual(pieces.flatMap((p) => p.tokenIds), encodeText(text));
    assert.ok(pieces.every((p) => !p.text.includes('\uFFFD') && p.tokenIds.length > 0));
  }
  assert.deepEqual(fallbackPieces(encodeText('plain ascii text')), toPieces('plain ascii text'));
});

test('partial-character tokens report their raw bytes', () => {
  const emoji = toPieces('🎉').find((p) => p.tokenIds.length > 1)!;
  const details = pieceTokenDetails(emoji);
  assert.equal(details.length, emoji.tokenIds.length);
  assert.deepEqual(details.flatMap((d) => d.bytes), [...Buffer.from('🎉')]);
  assert.match(details[0]!.token, /^bytes:(\\x[0-9a-f]{2})+$/);
});

test('special-token text is counted as plain text instead of throwing', () => {
  assert.ok(countTokens('a <|endoftext|> b') > 3);
});

test('UTF-8 boundary check', () => {
  assert.equal(endsOnCharBoundary([0x61]), true);
  assert.equal(endsOnCharBoundary([0xf0, 0x9f, 0x8e]), false);
  assert.equal(endsOnCharBoundary([0xf0, 0x9f, 0x8e, 0x89]), true);
  assert.equal(endsOnCharBoundary([0xe6, 0x97]), false);
});

test('chat input counting: text tokens + 3 per message + 3', async () => {
  const messages = [
    { role: 'system' as const, content: 'Be brief.' },
    { role: 'user' as const, content: 'What is 12 * 7?' },
  ];
  assert.equal(await countChatTokens(messages), encode('Be brief.').length + encode('What is 12 * 7?').length + 3 * 2 + 3);
  // Tools offered to the model count as input too.
  const withTools = await countChatTokens(messages, [{ name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object' } }]);
  assert.ok(withTools > (await countChatTokens(messages)));
});
