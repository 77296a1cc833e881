// The headers a forwarded request takes upstream: the caller's own, less what describes
// its connection and route to us. A header the caller's Connection names is hop-by-hop
// too (RFC 9110 §7.6.1), for this hop only: the bad-input gate found one forwarded.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Aggregator } from './aggregator.ts';

const aggregator = new Aggregator({ url: 'http://127.0.0.1:9/api/v1', key: 'sk-or-upstream', referer: undefined, title: undefined, timeoutMs: 1_000, modelsRefreshMs: 60_000 });
after(() => aggregator.close());

test("headers the caller's Connection names stay behind; the others go on, the upstream key in place of the caller's", () => {
  const out = aggregator.upstreamHeaders({
    connection: 'keep-alive, X-Fz-Hop ,x-other-hop, authorization',
    'x-fz-hop': '1',
    'x-other-hop': '2',
    'content-type': 'application/json',
    'x-title-of-caller': 'kept',
    authorization: 'Bearer sk-agent-caller',
  });
  // (Listing authorization cannot take the upstream key away: it is set after the caller's headers are sifted.)
  assert.deepEqual(out, { 'content-type': 'application/json', 'x-title-of-caller': 'kept', authorization: 'Bearer sk-or-upstream', 'accept-encoding': 'identity' });
});
