// What the provider tells its observer about each upstream call (metrics and the
// failure warning are built on it), and the readiness probe.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import type { UpstreamCallReport } from '../../upstream-observer.ts';
import { fixture, replaySse } from './fake-upstream.test-support.ts';
import { createOpenAICompatibleProvider } from './provider.ts';
import { ask, collect, content, makeConfig, provider, startStream, withUpstream } from './provider.test-support.ts';

function observed(): { reports: UpstreamCallReport[]; observer: { callEnded(r: UpstreamCallReport): void } } {
  const reports: UpstreamCallReport[] = [];
  return { reports, observer: { callEnded: (r) => reports.push(r) } };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe('upstream call reports', () => {
  it('reports a finished stream as ok, with the upstream model, host, first byte and request id', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('vllm-usage-in-last-choice.sse')),
      async (up) => {
        const { reports, observer } = observed();
        const { error } = await collect(provider(up, {}, { observer }).chat({ ...ask, requestId: 'req_abc' }, new AbortController().signal));
        assert.equal(error, undefined);
        assert.equal(reports.length, 1);
        const r = reports[0]!;
        assert.equal(r.outcome, 'ok');
        assert.equal(r.operation, 'chat');
        assert.equal(r.model, 'small-model');
        assert.equal(r.host, new URL(up.baseUrl).host);
        assert.equal(r.requestId, 'req_abc');
        assert.equal(r.failure, undefined);
        assert.ok(r.firstByteSeconds !== undefined && r.firstByteSeconds <= r.seconds);
        assert.equal(JSON.stringify(r).includes('sk-test-123'), false, 'never the key');
      },
    );
  });

  it('a non-2xx answer: kind status with the status, and no upstream text', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'secret internal detail' } }));
      },
      async (up) => {
        const { reports, observer } = observed();
        const { error } = await collect(provider(up, { UPSTREAM_MAX_RETRIES: '0' }, { observer }).complete({ model: 'agent', prompt: 'x' }, new AbortController().signal));
        assert.ok(error);
        assert.equal(reports.length, 1);
        assert.equal(reports[0]!.operation, 'completion');
        assert.equal(reports[0]!.outcome, 'error');
        assert.deepEqual(reports[0]!.failure, { kind: 'status', status: 500 });
        assert.equal(reports[0]!.firstByteSeconds, undefined);
      },
    );
  });

  it('a non-2xx answer with an error type and code: both reported, still no upstream text', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'secret internal detail', type: 'invalid_request_error', code: 'context_length_exceeded' } }));
      },
      async (up) => {
        const { reports, observer } = observed();
        await collect(provider(up, { UPSTREAM_MAX_RETRIES: '0' }, { observer }).chat(ask, new AbortController().signal));
        assert.deepEqual(reports[0]!.failure, { kind: 'status', status: 400, type: 'invalid_request_error', code: 'context_length_exceeded' });
      },
    );
  });

  it('a refused connection: kind connection, with our reason', async () => {
    const port = await closedPort();
    const { reports, observer } = observed();
    const p = createOpenAICompatibleProvider(makeConfig(`http://127.0.0.1:${port}/v1`, { UPSTREAM_MAX_RETRIES: '0' }), { observer });
    const { error } = await collect(p.chat(ask, new AbortController().signal));
    await p.close?.();
    assert.ok(error);
    assert.equal(reports[0]!.failure?.kind, 'connection');
    assert.match(reports[0]!.failure?.reason ?? '', /^upstream connection failed/);
  });

  it('no first byte in time: kind timeout', async () => {
    await withUpstream(
      () => undefined, // never answers
      async (up) => {
        const { reports, observer } = observed();
        const { error } = await collect(provider(up, { UPSTREAM_CONNECT_TIMEOUT_MS: '30', UPSTREAM_MAX_RETRIES: '0' }, { observer }).chat(ask, new AbortController().signal));
        assert.ok(error);
        assert.equal(reports[0]!.failure?.kind, 'timeout');
      },
    );
  });

  it('a stream cut after it started: kind stream; an upstream error event: kind stream with its code', async () => {
    await withUpstream(
      (_req, res) => {
        startStream(res, content('Hel'));
        setTimeout(() => res.destroy(), 20);
      },
      async (up) => {
        const { reports, observer } = observed();
        const { error } = await collect(provider(up, {}, { observer }).chat(ask, new AbortController().signal));
        assert.ok(error);
        assert.equal(reports[0]!.outcome, 'error');
        assert.equal(reports[0]!.failure?.kind, 'stream');
        assert.equal(reports[0]!.failure?.reason, undefined, 'stream failures may quote the upstream: no text');
        assert.ok(reports[0]!.firstByteSeconds !== undefined);
      },
    );
    await withUpstream(
      (_req, res) => replaySse(res, fixture('vllm-error-mid-stream.sse')),
      async (up) => {
        const { reports, observer } = observed();
        await collect(provider(up, {}, { observer }).chat(ask, new AbortController().signal));
        assert.equal(reports[0]!.failure?.kind, 'stream');
      },
    );
  });

  it('a caller that goes away: aborted, not an error', async () => {
    await withUpstream(
      (_req, res) => startStream(res, content('Hel')),
      async (up) => {
        const { reports, observer } = observed();
        const abort = new AbortController();
        const iterator = provider(up, {}, { observer }).chat(ask, abort.signal)[Symbol.asyncIterator]();
        await iterator.next();
        abort.abort();
        await assert.rejects(iterator.next());
        assert.equal(reports[0]!.outcome, 'aborted');
        assert.equal(reports[0]!.failure, undefined);
      },
    );
  });

  it('an observer that throws never fails the call', async () => {
    await withUpstream(
      (_req, res) => replaySse(res, fixture('vllm-usage-in-last-choice.sse')),
      async (up) => {
        const observer = {
          callEnded() {
            throw new Error('metrics broke');
          },
        };
        const { error, events } = await collect(provider(up, {}, { observer }).chat(ask, new AbortController().signal));
        assert.equal(error, undefined);
        assert.equal(events.at(-1)?.type, 'finish');
      },
    );
  });
});

describe('probe', () => {
  it('GETs {base}/models with the configured key and headers', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"list","data":[]}');
      },
      async (up) => {
        await provider(up).probe(1000);
        assert.equal(up.requests[0]!.method, 'GET');
        assert.equal(up.requests[0]!.url, '/v1/models');
        assert.equal(up.requests[0]!.headers.authorization, 'Bearer sk-test-123');
        assert.equal(up.requests[0]!.headers['x-title'], 'agent-api');
      },
    );
  });

  it('rejects with a short reason: a status, a refused connection, no answer in time', async () => {
    await withUpstream(
      (_req, res) => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"bad key sk-test-123"}}');
      },
      async (up) => {
        await assert.rejects(provider(up).probe(1000), { message: 'answered 401' });
      },
    );
    const port = await closedPort();
    const p = createOpenAICompatibleProvider(makeConfig(`http://127.0.0.1:${port}/v1`));
    await assert.rejects(p.probe(1000), /^Error: connection failed: /);
    await p.close?.();
    await withUpstream(
      () => undefined,
      async (up) => {
        await assert.rejects(provider(up).probe(30), { message: 'no answer within 30 ms' });
      },
    );
  });
});
