// The upstream's /embeddings: slices within OpenAI's request limits, base64 asked for
// and floats read too, vectors put back in input order by index, a vector longer than
// asked shortened, failures as ProviderErrors (a failed slice stops the others), an
// abort thrown as its reason, and one observer report per upstream call.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { ProviderError } from '../../types.ts';
import type { UpstreamCallReport } from '../../upstream-observer.ts';
import { float32FromBase64, readAnswer, slices } from './embeddings.ts';
import type { ReceivedRequest } from './fake-upstream.test-support.ts';
import { provider, withUpstream } from './provider.test-support.ts';

const b64 = (values: number[]) => Buffer.from(new Float32Array(values).buffer).toString('base64');
const never = new AbortController().signal;

/** An OpenAI-like answer: each input's vector is [input length, index, 1, ...], `size` values. */
function answer(req: ReceivedRequest, res: ServerResponse, size = 4) {
  const input = req.body.input as string[];
  const data = input.map((text, index) => {
    const v = Array.from({ length: size }, (_, i) => (i === 0 ? text.length : i === 1 ? index : 1));
    return { object: 'embedding', index, embedding: req.body.encoding_format === 'base64' ? b64(v) : v };
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data: data.reverse(), model: req.body.model, usage: { prompt_tokens: input.length * 3, total_tokens: input.length * 3 } }));
}

describe('slicing and reading answers', () => {
  it('slices bound inputs, bytes and vector values, and never leave one empty', () => {
    const many = Array.from({ length: 2048 }, () => 'x');
    assert.deepEqual(slices(many, 1536).map((s) => s.input.length), [170, 170, 170, 170, 170, 170, 170, 170, 170, 170, 170, 170, 8]);
    assert.equal(slices(many, 64).length, 1);
    const big = Array.from({ length: 5 }, () => 'y'.repeat(100_000));
    assert.deepEqual(slices(big, 64).map((s) => [s.start, s.input.length]), [[0, 2], [2, 2], [4, 1]]);
    assert.deepEqual(slices(['z'.repeat(400_000)], 64).map((s) => s.input.length), [1]);
  });

  it('reads base64 and floats, orders by index, shortens a longer vector, refuses what does not fit', () => {
    assert.deepEqual(Array.from(float32FromBase64(b64([0.5, -2]))), [0.5, -2]);
    const got = readAnswer({ data: [{ index: 1, embedding: [3, 4] }, { index: 0, embedding: b64([1, 0]) }], usage: { prompt_tokens: 7 } }, 2, undefined);
    assert.deepEqual(got.vectors.map((v) => Array.from(v)), [[1, 0], [3, 4]]);
    assert.equal(got.tokens, 7);
    const short = readAnswer({ data: [{ embedding: [3, 4, 12] }] }, 1, 2);
    assert.deepEqual(Array.from(short.vectors[0]!).map((x) => Math.round(x * 1000) / 1000), [0.6, 0.8]);
    assert.equal(short.tokens, undefined);
    const bad: unknown[] = [
      { data: [] },
      { data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [1] }] },
      { data: [{ index: 5, embedding: [1] }, { index: 0, embedding: [1] }] },
      { data: [{ index: 0, embedding: 'abc' }, { index: 1, embedding: [1] }] },
      { data: [{ index: 0, embedding: ['1'] }, { index: 1, embedding: [1] }] },
      { data: [{ index: 0, embedding: b64([Number.NaN]) }, { index: 1, embedding: [1] }] },
      { error: { message: 'model not found' } },
      'text',
    ];
    for (const payload of bad) assert.throws(() => readAnswer(payload, 2, undefined), ProviderError, JSON.stringify(payload));
    assert.throws(() => readAnswer({ data: [{ embedding: [1, 2] }] }, 1, 4), /2 values where 4 were asked for/);
  });
});

describe('upstream embeddings', () => {
  it('sends the model, base64, dimensions and user; reads the vectors in order and the usage', async () => {
    await withUpstream((req, res) => answer(req, res), async (up) => {
      const got = await provider(up).embed({ model: 'text-embedding-3-small', input: ['a', 'bb', 'ccc'], dimensions: 4, user: 'u1', requestId: 'req_1' }, never);
      assert.deepEqual(got.vectors.map((v) => [v[0], v[1]]), [[1, 0], [2, 1], [3, 2]]);
      assert.equal(got.inputTokens, 9);
      assert.equal(up.requests.length, 1);
      const req = up.requests[0]!;
      assert.equal(req.url, '/v1/embeddings');
      assert.deepEqual(req.body, { model: 'text-embedding-3-small', input: ['a', 'bb', 'ccc'], encoding_format: 'base64', dimensions: 4, user: 'u1' });
      assert.equal(req.headers.authorization, 'Bearer sk-test-123');
    });
  });

  it('a large request goes in slices, at most four at a time, put back in order; tokens summed; one report each', async () => {
    let inFlight = 0;
    let most = 0;
    await withUpstream(
      async (req, res) => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 10));
        inFlight--;
        answer(req, res, 3072);
      },
      async (up) => {
        const reports: UpstreamCallReport[] = [];
        const input = Array.from({ length: 1000 }, (_, i) => 'x'.repeat(i + 1));
        const got = await provider(up, {}, { observer: { callEnded: (r) => reports.push(r) } }).embed({ model: 'text-embedding-3-large', input }, never);
        assert.equal(up.requests.length, Math.ceil(1000 / 85));
        assert.ok(most > 1 && most <= 4, `${most} in flight`);
        assert.deepEqual(got.vectors.map((v) => v[0]), input.map((t) => t.length));
        assert.equal(got.inputTokens, 3000);
        assert.equal(reports.length, up.requests.length);
        assert.ok(reports.every((r) => r.operation === 'embeddings' && r.outcome === 'ok' && r.model === 'text-embedding-3-large'));
      },
    );
  });

  it('a failed slice is a ProviderError and stops the others; a client abort throws its reason', async () => {
    // The other slices are held until the test lets them go (never by a timer): the
    // failure must come back while they are still unanswered, and their calls be closed.
    let release!: () => void;
    let held = new Promise<void>((resolve) => (release = resolve));
    let answered = 0;
    let closedEarly = 0;
    await withUpstream(
      async (req, res, raw) => {
        if ((req.body.input as string[])[0] === 'x'.repeat(86)) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'bad slice' } }));
          return;
        }
        const gone = new Promise<boolean>((resolve) => raw.socket.once('close', () => resolve(true)));
        if (await Promise.race([held.then(() => false), gone])) {
          closedEarly++;
          return;
        }
        answered++;
        answer(req, res, 3072);
      },
      async (up) => {
        const input = Array.from({ length: 1000 }, (_, i) => 'x'.repeat(i + 1));
        const p = provider(up, { UPSTREAM_MAX_RETRIES: '0' });
        await assert.rejects(p.embed({ model: 'text-embedding-3-large', input }, never), (e: unknown) => e instanceof ProviderError && /answered 400/.test(e.message));
        assert.equal(answered, 0, 'the other slices were not waited for');
        assert.ok(up.requests.length <= 5, `${up.requests.length} requests`);
        // Every other slice that reached the upstream has its call closed, unanswered.
        for (let i = 0; closedEarly < up.requests.length - 1 && i < 2_000; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(closedEarly, up.requests.length - 1, "the other slices' calls were closed");
        assert.equal(answered, 0);
        release();

        // Held again: the abort comes while every slice is unanswered.
        held = new Promise<void>((resolve) => (release = resolve));
        const stop = new AbortController();
        const reason = new Error('client gone');
        setTimeout(() => stop.abort(reason), 20);
        await assert.rejects(p.embed({ model: 'text-embedding-3-large', input: input.slice(100, 200) }, stop.signal), (e: unknown) => e === reason);
        release();
      },
    );
  });
});
