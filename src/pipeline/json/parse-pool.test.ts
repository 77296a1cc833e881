// The worker-thread JSON parser (parse-pool.ts) and its piecewise transfer
// (pieces.ts): the same value, the same refusals and the same contract findings as
// parsing and checking on the event loop, and the loop turns while a large value is rebuilt.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createChatCompletion } from '../../contract/endpoints/chat.ts';
import { createEmbedding } from '../../contract/endpoints/embeddings.ts';
import { ApiError } from '../../errors.ts';
import { CheckedBody, checkCall } from '../contract.ts';
import { newCall, type Call } from '../call.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import { parseJsonBody } from './text.ts';
import { JsonParsePool } from './parse-pool.ts';
import { PIECE_BYTES, PieceReader, toPieces } from './pieces.ts';

const pool = new JsonParsePool();
after(() => pool.close());

function roundTrip(value: unknown, pieceBytes: number): { value: unknown; pieces: number } {
  const pieces = toPieces(value, pieceBytes);
  const reader = new PieceReader();
  for (const p of pieces) {
    assert.equal(reader.done, false);
    reader.read(p);
  }
  return { value: reader.value, pieces: pieces.length };
}

describe('pieces', () => {
  test('any JSON value comes back equal, member order and own `__proto__` keys included, cut into many pieces', () => {
    const parsed = JSON.parse(
      JSON.stringify({
        a: [1, 2.5, -0, null, true, 'é漢\ud83d\ude00', { deep: [[[['x'.repeat(500)]]]] }],
        '10': 'ten',
        '2': 'two',
        z: Array.from({ length: 2_000 }, (_, i) => ({ i, s: `item ${i}` })),
        big: 'y'.repeat(50_000),
        empty: { o: {}, a: [] },
      }).replace('"empty"', '"__proto__":{"polluted":1},"empty"'),
    );
    for (const pieceBytes of [64, 1_000, 1 << 20]) {
      const back = roundTrip(parsed, pieceBytes);
      assert.deepEqual(back.value, parsed);
      assert.deepEqual(Object.keys(back.value as object), Object.keys(parsed));
      assert.ok(Object.hasOwn(back.value as object, '__proto__'));
      assert.equal(Object.getPrototypeOf(back.value), Object.prototype);
      if (pieceBytes === 64) assert.ok(back.pieces > 100, `${back.pieces} pieces`);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    for (const scalar of ['text', 42, null, true, 'a long string, in parts 🙂'.repeat(20)]) assert.deepEqual(roundTrip(scalar, 64).value, scalar);
    // A string split inside a surrogate pair comes back whole.
    const emoji = '🙂'.repeat(1_000);
    assert.equal(roundTrip({ emoji, after: 1 }, 63).value && (roundTrip({ emoji, after: 1 }, 63).value as { emoji: string }).emoji, emoji);
  });

  test('a value of many small members is cut into pieces of about PIECE_BYTES, each step counted', () => {
    // Counted by their members alone, 100,000 empty objects made pieces of 360 KB, each
    // holding the event loop for tens of milliseconds to rebuild (the gateway, which
    // rebuilds a large body whole, showed it in the bad-input gate).
    for (const member of [{}, [], 0, null, 'x', { a: 1 }, [[]]]) {
      const value = { model: 'm', many: Array.from({ length: 100_000 }, () => member) };
      const pieces = toPieces(value);
      const largest = Math.max(...pieces.map((p) => p.byteLength));
      assert.ok(largest <= 1.5 * PIECE_BYTES, `${JSON.stringify(member)} × 100,000: a piece of ${largest} bytes`);
      assert.deepEqual(roundTrip(value, PIECE_BYTES).value, value);
    }
  });
});

/** A call of the chat endpoint with a key holding `permissions`. */
function chatCall(contract: typeof createChatCompletion | typeof createEmbedding, permissions: Record<string, boolean> = {}, models: string[] | null = null): Call {
  const call = newCall({ id: 'req_test', method: 'POST', route: { auth: 'key', contract, endpoint: `/v1${contract.path}` }, routeLabel: contract.path, ip: '127.0.0.1', log: { level: 'silent', info() {}, warn() {}, error() {} } });
  call.key = { id: 'key_1', accountId: 'acct_1', permissions: { function_calling: true, embeddings: true, ...permissions }, models } as unknown as KeyRecord;
  return call;
}

/** checkCall on the body parsed here, and on the worker's findings: the same outcome. */
async function sameOutcome(contract: typeof createChatCompletion | typeof createEmbedding, text: string, permissions: Record<string, boolean> = {}, models: string[] | null = null) {
  const outcome = (call: Call, body: unknown) => {
    try {
      checkCall(call, { body });
      return { body: call.body, ignored: call.ignored, headers: call.headers, model: call.model, user: call.user };
    } catch (err) {
      assert.ok(err instanceof ApiError, String(err));
      return { error: err.toBody(), status: err.status, model: call.model, user: call.user };
    }
  };
  const here = outcome(chatCall(contract, permissions, models), parseJsonBody(Buffer.from(text)));
  const found = await pool.parse(Buffer.from(text), contract);
  assert.ok(found instanceof CheckedBody, 'a registry endpoint gets its body checked on the worker');
  const there = outcome(chatCall(contract, permissions, models), found);
  assert.deepEqual(there, here);
  return here;
}

describe('the pool', () => {
  // Over LARGE_JSON_BYTES: a long conversation.
  const padding = ',"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"' + 'p'.repeat(300_000) + '"}]';
  const chat = (extra: string, user = 'u'.repeat(250)) => `{"model":"agent","user":"${user}"${padding}${extra}}`;

  test("a registry endpoint's findings are what checkCall finds on the event loop: checked value, ignored fields, refusals in order", async () => {
    const ok = await sameOutcome(createChatCompletion, chat(',"temperature":0.5,"unknown_field":1'));
    assert.ok('ignored' in ok && ok.ignored?.includes('unknown_field'), JSON.stringify(ok).slice(0, 300));
    assert.equal((await sameOutcome(createChatCompletion, chat(',"temperature":"hot"'))).status, 400);
    // Who called is noted before the check refuses, cut and cleaned alike.
    const nul = await sameOutcome(createChatCompletion, chat('', `${'v'.repeat(300)}\\u0000x`));
    assert.deepEqual([nul.status, nul.user?.length], [400, 256]);
    assert.equal((await sameOutcome(createChatCompletion, chat(',"tools":[{"type":"function","function":{"name":"f"}}],"temperature":"hot"'), { function_calling: false })).status, 403);
    assert.equal((await sameOutcome(createChatCompletion, chat('').replace('"agent"', '"agent-think"'), {}, ['agent'])).status, 403);
    assert.equal((await sameOutcome(createChatCompletion, chat(',"n":2'))).status, 400);
    assert.equal((await sameOutcome(createEmbedding, `{"model":"agent-embed","input":[${Array(50_000).fill('[1,2,3]').join(',')}]}`)).status, 400);
    const notObject = await pool.parse(Buffer.from(`[${'1,'.repeat(200_000)}1]`), createChatCompletion);
    assert.throws(() => checkCall(chatCall(createChatCompletion), { body: notObject }), /must be a JSON object/);
  });

  test("the parser's refusals, as its ApiError", async () => {
    const cases = [Buffer.from(chat(',"x":[1,')), Buffer.from(chat(`,"deep":${'['.repeat(200)}${']'.repeat(200)}`)), Buffer.from(chat(',"x":{"__proto__":{}}'))];
    const invalid = Buffer.from(chat(',"name":"AB"'));
    invalid[invalid.indexOf('"AB"') + 1] = 0xc0;
    cases.push(invalid);
    for (const bytes of cases) {
      let expected: unknown;
      try {
        parseJsonBody(bytes);
      } catch (err) {
        expected = (err as ApiError).toBody();
      }
      await assert.rejects(pool.parse(bytes, createChatCompletion), (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.deepEqual(err.toBody(), expected);
        return true;
      });
    }
  });

  test('an endpoint outside the registry gets the parsed value; the event loop turns while a large one is rebuilt', async () => {
    const value = { model: 'agent', messages: Array.from({ length: 20_000 }, (_, i) => ({ role: 'user', content: `m${i} ${'w'.repeat(400)}` })) };
    const copy = { ...createChatCompletion };
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const parsed = await pool.parse(Buffer.from(JSON.stringify(value)), copy);
    clearInterval(ticker);
    assert.deepEqual(parsed, value);
    assert.ok(turns > 10, `${turns} turns of the event loop while 9 MB came back`);
  });

  test('asked for some top-level fields, only those come back (a proxy reading a few of a large body rebuilds no more)', async () => {
    const body = { messages: Array.from({ length: 50_000 }, () => ({})), model: 'm', max_tokens: 5, stream: true, __proto__x: 1 };
    const bytes = Buffer.from(JSON.stringify(body));
    assert.deepEqual(await pool.parse(bytes, null, undefined, undefined, ['model', 'max_tokens', 'missing']), { model: 'm', max_tokens: 5 });
    // Not an object: the value as it is (the caller judges it); a refusal as ever.
    assert.deepEqual(await pool.parse(Buffer.from(JSON.stringify([1, { model: 'm' }])), null, undefined, undefined, ['model']), [1, { model: 'm' }]);
    await assert.rejects(pool.parse(Buffer.from('{"model":'), null, undefined, undefined, ['model']), (err: unknown) => err instanceof ApiError && err.status === 400);
    // The picked value is an own member only: a field named like an inherited one is not found on the prototype.
    assert.deepEqual(await pool.parse(Buffer.from('{"a":1}'), null, undefined, undefined, ['toString', 'a']), { a: 1 });
  });

  test('a closed pool refuses with 503', async () => {
    const closed = new JsonParsePool();
    await closed.close();
    await assert.rejects(closed.parse(Buffer.from('{}'), null), (err: unknown) => err instanceof ApiError && err.status === 503);
  });
});
