import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matches } from './attribute-filter.ts';

const attrs = { author: 'ann', year: 2021, draft: false, region: 'eu' };

test('each comparison operator, a missing key and mixed types', () => {
  assert.equal(matches({ type: 'eq', key: 'author', value: 'ann' }, attrs), true);
  assert.equal(matches({ type: 'eq', key: 'author', value: 'bob' }, attrs), false);
  assert.equal(matches({ type: 'eq', key: 'draft', value: false }, attrs), true);
  assert.equal(matches({ type: 'ne', key: 'author', value: 'bob' }, attrs), true);
  assert.equal(matches({ type: 'ne', key: 'missing', value: 'x' }, attrs), true);
  assert.equal(matches({ type: 'gt', key: 'year', value: 2020 }, attrs), true);
  assert.equal(matches({ type: 'gt', key: 'year', value: 2021 }, attrs), false);
  assert.equal(matches({ type: 'gte', key: 'year', value: 2021 }, attrs), true);
  assert.equal(matches({ type: 'lt', key: 'year', value: 2021 }, attrs), false);
  assert.equal(matches({ type: 'lte', key: 'year', value: 2021 }, attrs), true);
  assert.equal(matches({ type: 'lt', key: 'year', value: '2030' }, attrs), false, 'no order across types');
  assert.equal(matches({ type: 'in', key: 'region', value: ['us', 'eu'] }, attrs), true);
  assert.equal(matches({ type: 'nin', key: 'region', value: ['us', 'eu'] }, attrs), false);
  assert.equal(matches({ type: 'nin', key: 'missing', value: ['us'] }, attrs), true);
  assert.equal(matches({ type: 'eq', key: 'author', value: 'ann' }, null), false);
});

test('and / or nest', () => {
  const f = { type: 'and' as const, filters: [{ type: 'gte' as const, key: 'year', value: 2020 }, { type: 'or' as const, filters: [{ type: 'eq' as const, key: 'author', value: 'zed' }, { type: 'eq' as const, key: 'region', value: 'eu' }] }] };
  assert.equal(matches(f, attrs), true);
  assert.equal(matches({ ...f, type: 'and', filters: [...f.filters, { type: 'eq', key: 'draft', value: true }] }, attrs), false);
});
