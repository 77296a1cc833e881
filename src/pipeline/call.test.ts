// The Call every request, batch line and job builds: cheap enough for every request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesPerCall } from '../../test/perf/allocation.ts';
import { newCall, type CallLog } from './call.ts';

const log: CallLog = { level: 'info', info() {}, warn() {}, error() {} };

test('building a call allocates the call and its few fields, no more (no per-call hidden classes)', async () => {
  let kept: unknown;
  const bytes = await bytesPerCall(() => {
    kept = newCall({ id: 'req_1', method: 'POST', route: null, routeLabel: '/v1/chat/completions', ip: '127.0.0.1', log });
  });
  assert.ok(kept);
  // The call with its empty body, query, params, ignored, headers and usage is well under
  // 1 KB; spreading `init` and then adding fields cost about 13 KB on Node 20.
  assert.ok(bytes < 2_000, `newCall allocated ${bytes.toFixed(0)} bytes per call`);
});
