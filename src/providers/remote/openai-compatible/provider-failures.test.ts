// The provider's failure paths against a fake upstream: errors, retries before the
// first byte, timeouts, and a client that goes away.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent } from 'undici';
import { ProviderError } from '../../types.ts';
import { fixture, replaySse, startFakeUpstream, type ReceivedRequest } from './fake-upstream.test-support.ts';
import { createOpenAICompatibleProvider } from './provider.ts';
import { ask, collect, content, makeConfig, provider, startStream, withUpstream } from './provider.test-support.ts';
describe('errors and retries', () => {
  it('retries a 503 before the first byte, then streams', async () => {
    const started = Date.now();
    let calls = 0;
    await withUpstream(
      (_req, res) => {
        if (++calls === 1) {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'Service overloaded', code: 503 } }));
          return;
        }
        return replaySse(res, fixture('vllm-usage-in-last-choice.sse'));
      },
      async (up) => {
        const { events, error } = await collect(provider(up).chat(ask, new AbortController().signal));
        assert.equal(error, undefined);
        assert.equal(up.requests.length, 2);
        assert.deepEqual(events.at(-1), { type: 'finish', reason: 'length', usage: { inputTokens: 25, outputTokens: 2 } });
        assert.ok(Date.now() - started >= 190, 'waited the 200 ms backoff');
      },
    );
  });

  it('gives up after UPSTREAM_MAX_RETRIES with the upstream status and message', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify({ error: { message: 'Rate limit exceeded', code: 429 } }));
      },
      async (up) => {
        const { error } = await collect(provider(up, {}, { retryBaseMs: 5 }).chat(ask, new AbortController().signal));
        assert.ok(error instanceof ProviderError);
        assert.equal(error.status, 429);
        assert.equal(error.message, 'the upstream model server answered 429: Rate limit exceeded');
        assert.equal(up.requests.length, 3, '1 try + 2 retries');
      },
    );
  });

  it('honours Retry-After, and gives up at once when it points past the deadline', async () => {
    let calls = 0;
    await withUpstream(
      (_req, res) => {
        if (++calls === 1) {
          res.writeHead(429, { 'retry-after': '0.3' });
          res.end();
          return;
        }
        return replaySse(res, fixture('vllm-usage-in-last-choice.sse'));
      },
      async (up) => {
        const started = Date.now();
        const { error } = await collect(provider(up, {}, { retryBaseMs: 5 }).chat(ask, new AbortController().signal));
        assert.equal(error, undefined);
        assert.ok(Date.now() - started >= 290, 'waited for Retry-After');
        assert.equal(up.requests.length, 2);
      },
    );
    await withUpstream(
      (_req, res) => {
        res.writeHead(503, { 'retry-after': '30' });
        res.end();
      },
      async (up) => {
        const started = Date.now();
        const { error } = await collect(
          provider(up, { UPSTREAM_TIMEOUT_MS: '5000' }, { retryBaseMs: 5 }).chat(ask, new AbortController().signal),
        );
        assert.ok(error instanceof ProviderError);
        assert.equal(error.message, 'the upstream model server answered 503: Service Unavailable');
        assert.ok(Date.now() - started < 1000);
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('does not retry a 400 and reports its message', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'error', message: 'top_a is not supported', type: 'BadRequestError', code: 400 }));
      },
      async (up) => {
        const { error } = await collect(provider(up, {}, { retryBaseMs: 5 }).chat(ask, new AbortController().signal));
        assert.ok(error instanceof ProviderError);
        assert.equal(error.status, 400);
        assert.equal(error.message, 'the upstream model server answered 400 (BadRequestError): top_a is not supported');
        assert.deepEqual(error.upstream, { type: 'BadRequestError', message: 'top_a is not supported' }, 'the numeric code is the status, not repeated');
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('retries a refused connection, then fails with ProviderError', async () => {
    const closed = await startFakeUpstream(() => {});
    const baseUrl = closed.baseUrl;
    await closed.close(); // nothing listens there now
    let calls = 0;
    const pool = new Agent();
    const counting = pool.compose((dispatch) => (opts, handler) => {
      calls++;
      return dispatch(opts, handler);
    });
    const p = createOpenAICompatibleProvider(makeConfig(baseUrl), { dispatcher: counting, retryBaseMs: 5 });
    const { error } = await collect(p.chat(ask, new AbortController().signal));
    await pool.close();
    assert.ok(error instanceof ProviderError);
    assert.match(error.message, /^upstream connection failed: .*ECONNREFUSED/);
    assert.equal(calls, 3);
  });

  it('never retries once streaming started: a connection cut mid-stream is a ProviderError', async () => {
    await withUpstream(
      async (_req, res) => {
        startStream(res, content('Hel'));
        await delay(30);
        res.destroy();
      },
      async (up) => {
        const { events, error } = await collect(provider(up, {}, { retryBaseMs: 5 }).chat(ask, new AbortController().signal));
        assert.deepEqual(events, [{ type: 'text-start', id: 'text-0' }, { type: 'text-delta', id: 'text-0', delta: 'Hel' }]);
        assert.ok(error instanceof ProviderError, String(error));
        assert.match(error.message, /^upstream stream failed/);
        assert.equal(error.retryable, false);
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('a stream that ends cleanly but unfinished is a ProviderError', async () => {
    await withUpstream(
      (_req, res) => {
        startStream(res, content('Hel'));
        res.end();
      },
      async (up) => {
        const { events, error } = await collect(provider(up).chat(ask, new AbortController().signal));
        assert.deepEqual(events, [{ type: 'text-start', id: 'text-0' }, { type: 'text-delta', id: 'text-0', delta: 'Hel' }]);
        assert.ok(error instanceof ProviderError);
        assert.match(error.message, /ended before the answer finished/);
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('first-byte timeout: an upstream that never answers', async () => {
    await withUpstream(
      () => {}, // hold the request
      async (up) => {
        const started = Date.now();
        const { error } = await collect(
          provider(up, { UPSTREAM_CONNECT_TIMEOUT_MS: '150' }, { retryBaseMs: 5 }).chat(ask, new AbortController().signal),
        );
        assert.ok(error instanceof ProviderError);
        assert.equal(error.message, 'upstream sent no response within 150 ms');
        assert.ok(Date.now() - started < 1000);
        assert.equal(up.requests.length, 1, 'timeouts are not retried');
        await up.requests[0]?.closed; // and the upstream request was closed
      },
    );
  });

  it('first-byte timeout also covers headers sent without a body byte', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
      },
      async (up) => {
        const { error } = await collect(provider(up, { UPSTREAM_CONNECT_TIMEOUT_MS: '150' }).chat(ask, new AbortController().signal));
        assert.ok(error instanceof ProviderError);
        assert.equal(error.message, 'upstream sent no response within 150 ms');
      },
    );
  });

  it('total timeout: a stream that stalls after starting', async () => {
    await withUpstream(
      (_req, res) => startStream(res, content('slow')),
      async (up) => {
        const started = Date.now();
        const { events, error } = await collect(provider(up, { UPSTREAM_TIMEOUT_MS: '300' }).chat(ask, new AbortController().signal));
        assert.deepEqual(events, [{ type: 'text-start', id: 'text-0' }, { type: 'text-delta', id: 'text-0', delta: 'slow' }]);
        assert.ok(error instanceof ProviderError);
        assert.equal(error.message, 'upstream timed out after 300 ms');
        assert.ok(Date.now() - started < 1500);
        await up.requests[0]?.closed;
      },
    );
  });
});

// --- client disconnect -----------------------------------------------------

describe('client disconnect', () => {
  it('aborting mid-stream closes the upstream request at once and throws the AbortError', async () => {
    await withUpstream(
      (_req, res) => startStream(res, content('first')), // then stays open, as a long generation would
      async (up) => {
        const controller = new AbortController();
        const iter = provider(up).chat(ask, controller.signal)[Symbol.asyncIterator]();
        assert.deepEqual((await iter.next()).value, { type: 'text-start', id: 'text-0' });
        assert.deepEqual((await iter.next()).value, { type: 'text-delta', id: 'text-0', delta: 'first' });

        const abortedAt = Date.now();
        controller.abort();
        // The upstream sees its request closed without the consumer pulling again.
        await Promise.race([
          up.requests[0]?.closed,
          delay(500).then(() => assert.fail('upstream request still open 500 ms after abort')),
        ]);
        assert.ok(Date.now() - abortedAt < 500);

        await assert.rejects(iter.next(), (err: unknown) => err instanceof Error && err.name === 'AbortError');
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('aborting before the first byte closes the request and does not retry', async () => {
    await withUpstream(
      () => {}, // never answers
      async (up) => {
        const controller = new AbortController();
        const pending = collect(provider(up, {}, { retryBaseMs: 5 }).chat(ask, controller.signal));
        while (up.requests.length === 0) await delay(5);
        controller.abort(new DOMException('client went away', 'AbortError'));
        const { error } = await pending;
        assert.ok(error instanceof DOMException && error.message === 'client went away', 'the caller’s own reason');
        await up.requests[0]?.closed;
        await delay(50);
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('aborting during the retry backoff stops there', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(503);
        res.end();
      },
      async (up) => {
        const controller = new AbortController();
        const pending = collect(provider(up, {}, { retryBaseMs: 1000 }).chat(ask, controller.signal));
        while (up.requests.length === 0) await delay(5);
        await delay(20);
        controller.abort();
        const { error } = await pending;
        assert.ok(error instanceof Error && error.name === 'AbortError');
        assert.equal(up.requests.length, 1);
      },
    );
  });

  it('an already-aborted signal never calls the upstream', async () => {
    await withUpstream(
      () => assert.fail('called'),
      async (up) => {
        const { error } = await collect(provider(up).chat(ask, AbortSignal.abort()));
        assert.ok(error instanceof Error && error.name === 'AbortError');
        assert.equal(up.requests.length, 0);
      },
    );
  });

  it('a consumer that stops iterating closes the upstream request too', async () => {
    await withUpstream(
      (_req, res) => startStream(res, content('a') + content('b')),
      async (up) => {
        for await (const event of provider(up).chat(ask, new AbortController().signal)) {
          assert.equal(event.type, 'text-start');
          break;
        }
        await Promise.race([up.requests[0]?.closed, delay(500).then(() => assert.fail('still open'))]);
      },
    );
  });
});

// --- upstreams that echo the request -----------------------------------------

describe('an upstream that echoes our request in its error', () => {
  const KEY = 'sk-test-123'; // provider.test-support's key
  const HEADER = 'hdr-secret-value-42';
  const OURS = 'our-admin-token-0123456789';
  const env = { UPSTREAM_HEADERS: JSON.stringify({ 'X-Api-Token': HEADER }), UPSTREAM_MAX_RETRIES: '0' };
  const options = { secrets: [OURS] };

  /** Our headers and body as a careless upstream quotes them, in several encodings, plus text we must not pass on. */
  const echo = (req: ReceivedRequest) =>
    `you sent ${JSON.stringify({ headers: req.headers, body: req.body })}; ${encodeURIComponent(String(req.headers.authorization))}; ${OURS}\u001b[2J\r\nand ${'more '.repeat(200)}`;

  function assertClean(text: string): void {
    for (const secret of [KEY, HEADER, OURS]) assert.ok(!text.includes(secret), `holds ${secret}: ${text}`);
    assert.ok(!/[\u0000-\u001f]/.test(text), `control characters: ${JSON.stringify(text)}`);
  }

  it('a JSON error: our words with its status, type and code; its message bounded, cleaned and scrubbed', async () => {
    await withUpstream(
      (req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: echo(req), type: 'invalid_request_error', code: 'context_length_exceeded', param: null }, echo: req.headers }));
      },
      async (up) => {
        const { error } = await collect(provider(up, env, options).chat(ask, new AbortController().signal));
        assert.ok(error instanceof ProviderError);
        assert.equal(error.status, 400);
        assert.match(error.message, /^the upstream model server answered 400 \(invalid_request_error: context_length_exceeded\): you sent /);
        assertClean(error.message);
        assert.equal(error.upstream?.type, 'invalid_request_error');
        assert.equal(error.upstream?.code, 'context_length_exceeded');
        assert.ok(error.upstream!.message!.length <= 200, `${error.upstream!.message!.length} characters`);
        assert.match(error.upstream!.message!, /…$/, 'a cut is marked');
        assertClean(JSON.stringify(error.upstream));
      },
    );
  });

  it('a body that is not JSON is not quoted at all, nor an error object without a message', async () => {
    for (const [type, body] of [
      ['text/html', (req: ReceivedRequest) => `<pre>${echo(req)}</pre>`],
      ['application/json', (req: ReceivedRequest) => JSON.stringify({ error: { headers: req.headers } })],
      ['application/json', (req: ReceivedRequest) => JSON.stringify({ detail: [{ loc: ['body'], input: req.headers }] })],
    ] as const) {
      await withUpstream(
        (req, res) => {
          res.writeHead(422, { 'content-type': type });
          res.end(body(req));
        },
        async (up) => {
          const { error } = await collect(provider(up, env, options).chat(ask, new AbortController().signal));
          assert.ok(error instanceof ProviderError);
          assert.equal(error.message, 'the upstream model server answered 422: Unprocessable Entity');
        },
      );
    }
  });

  it('a type or code that is not a short identifier is left out', async () => {
    await withUpstream(
      (req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'no', type: `bad key ${String(req.headers.authorization)}`, code: KEY } }));
      },
      async (up) => {
        const { error } = await collect(provider(up, env, options).chat(ask, new AbortController().signal));
        assert.ok(error instanceof ProviderError);
        assert.equal(error.message, 'the upstream model server answered 401: no');
        assert.deepEqual(error.upstream, { message: 'no' });
      },
    );
  });

  it('mid-stream: an error chunk and a plain-text `event: error` are cleaned and scrubbed alike', async () => {
    for (const frame of [
      (req: ReceivedRequest) => `data: ${JSON.stringify({ error: { message: echo(req), code: 502 } })}\n\n`,
      (req: ReceivedRequest) => `event: error\ndata: ${echo(req).replace(/[\r\n]/g, ' ')}\n\n`,
    ]) {
      await withUpstream(
        (req, res) => {
          startStream(res, content('Hel') + frame(req));
          res.end();
        },
        async (up) => {
          const { events, error } = await collect(provider(up, env, options).chat(ask, new AbortController().signal));
          assert.equal(events.length, 2, 'what came before is kept');
          assert.ok(error instanceof ProviderError);
          assert.match(error.message, /^the upstream model server reported an error mid-stream( \(502\))?: you sent /);
          assertClean(error.message);
        },
      );
    }
  });

  it('embeddings: an error status and an error in a 200 answer', async () => {
    for (const status of [400, 200]) {
      await withUpstream(
        (req, res) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: echo(req), type: 'invalid_request_error' } }));
        },
        async (up) => {
          const err = await provider(up, env, options).embed({ model: 'text-embedding-3-small', input: ['x'] }, new AbortController().signal).then(
            () => assert.fail('resolved'),
            (e: unknown) => e,
          );
          assert.ok(err instanceof ProviderError);
          assert.match(err.message, status === 400 ? /^the upstream model server answered 400 \(invalid_request_error\): you sent / : /^the upstream model server reported an error in its answer \(invalid_request_error\): you sent /);
          assertClean(err.message);
        },
      );
    }
  });
});
