// The chat body's mapping to the provider request runs on every request: held to a
// small allocation budget (the spread pattern it used cost about 2 KB more per request).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesPerCall } from '../../../test/perf/allocation.ts';
import { toProviderRequest, type ChatBody } from './to-provider-request.ts';

test('mapping a two-message chat body allocates the request and its messages, no more', async () => {
  const body = {
    model: 'agent',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Say hello in one short sentence.' },
    ],
  } as unknown as ChatBody;
  let kept: ReturnType<typeof toProviderRequest> | undefined;
  const bytes = await bytesPerCall(() => {
    kept = toProviderRequest(body, 100);
  });
  assert.deepEqual(kept?.request, {
    model: 'agent',
    stream: false,
    maxTokens: 100,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Say hello in one short sentence.' },
    ],
  });
  // About 1.8 KB; `{ ...generationOptions(), messages, ... }` made it about 4 KB on Node 20.
  assert.ok(bytes < 2_800, `toProviderRequest allocated ${bytes.toFixed(0)} bytes per call`);
});
