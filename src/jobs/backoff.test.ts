import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs } from './backoff.ts';

test('doubles per attempt, is capped, and keeps at least half of the delay', () => {
  const b = { baseMs: 100, maxMs: 1_000 };
  assert.deepEqual([1, 2, 3, 4, 5, 60].map((n) => backoffMs(n, b, () => 1)), [100, 200, 400, 800, 1_000, 1_000]);
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => backoffMs(n, b, () => 0)), [50, 100, 200, 400, 500]);
});
