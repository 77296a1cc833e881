// fast-metrics.ts must render exactly what prom-client's own Counter and Histogram
// render for the same observations, label values needing escapes included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { FastCounter, FastHistogram } from './fast-metrics.ts';

const BOUNDS = [0.005, 0.1, 1, 10];
const OBSERVED: [string, string, number, number][] = [
  ['/v1/chat/completions', 'POST', 200, 0.004],
  ['/v1/chat/completions', 'POST', 200, 0.005],
  ['/v1/chat/completions', 'POST', 499, 2.5],
  ['/v1/models/{model}', 'GET', 404, 0.02],
  ['weird "route"\\\n', 'GET', 200, 50],
];

test('counters and histograms render as prom-client renders them, and reset empties them', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const c1 = new FastCounter({ name: 'req_total', help: 'Requests.', labelNames: ['route', 'method', 'status'], registers: [ours] });
  const h1 = new FastHistogram({ name: 'req_seconds', help: 'Seconds.', labelNames: ['route', 'method'], registers: [ours] }, BOUNDS);
  const c2 = new Counter({ name: 'req_total', help: 'Requests.', labelNames: ['route', 'method', 'status'], registers: [theirs] });
  const h2 = new Histogram({ name: 'req_seconds', help: 'Seconds.', labelNames: ['route', 'method'], buckets: BOUNDS, registers: [theirs] });
  for (const [route, method, status, seconds] of OBSERVED) {
    c1.inc([route, method, status]);
    c2.inc({ route, method, status });
    h1.observe([route, method], seconds);
    h2.observe({ route, method }, seconds);
  }
  c1.inc(['/v1/models/{model}', 'GET', 404], 4);
  c2.inc({ route: '/v1/models/{model}', method: 'GET', status: 404 }, 4);
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics());
  assert.match(text, /req_total\{route="\/v1\/chat\/completions",method="POST",status="200"\} 2/);
  assert.match(text, /req_seconds_bucket\{le="0.005",route="\/v1\/chat\/completions",method="POST"\} 2/);
  ours.resetMetrics();
  assert.doesNotMatch(await ours.metrics(), /route=/);
});
