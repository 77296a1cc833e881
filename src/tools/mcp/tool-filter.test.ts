// allowed_tools and require_approval in every form the reference gives them: absent/null,
// a list of names, a filter ({tool_names, read_only}); 'always', 'never' and the object
// form {always, never}, where a tool in neither needs approval and `always` wins over `never`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAllowed, matchesFilter, needsApproval, type FilterableTool } from './tool-filter.ts';

const read: FilterableTool = { name: 'search', annotations: { readOnlyHint: true } };
const write: FilterableTool = { name: 'delete', annotations: { destructiveHint: true } };
const plain: FilterableTool = { name: 'plain' };
const hintFalse: FilterableTool = { name: 'maybe', annotations: { readOnlyHint: false } };
const all = [read, write, plain, hintFalse];
const names = (pick: (t: FilterableTool) => boolean) => all.filter(pick).map((t) => t.name);

test('filters: names, read-only (true and false), both (each must hold), empty, absent', () => {
  assert.deepEqual(names((t) => matchesFilter(t, { tool_names: ['search', 'plain'] })), ['search', 'plain']);
  assert.deepEqual(names((t) => matchesFilter(t, { read_only: true })), ['search']);
  assert.deepEqual(names((t) => matchesFilter(t, { read_only: false })), ['delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => matchesFilter(t, { tool_names: ['search', 'delete'], read_only: true })), ['search']);
  assert.deepEqual(names((t) => matchesFilter(t, { tool_names: [] })), []);
  assert.deepEqual(names((t) => matchesFilter(t, {})), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => matchesFilter(t, undefined)), []);
  assert.deepEqual(names((t) => matchesFilter(t, null)), []);
  // A hint that is not exactly true is no read-only annotation.
  assert.equal(matchesFilter({ name: 'x', annotations: { readOnlyHint: 'yes' } }, { read_only: true }), false);
  assert.equal(matchesFilter({ name: 'x', annotations: null }, { read_only: true }), false);
});

test('allowed_tools: absent or null allows all; a list of names; a filter object', () => {
  assert.deepEqual(names((t) => isAllowed(t, undefined)), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => isAllowed(t, null)), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => isAllowed(t, ['delete', 'nope'])), ['delete']);
  assert.deepEqual(names((t) => isAllowed(t, [])), []);
  assert.deepEqual(names((t) => isAllowed(t, { tool_names: ['plain'] })), ['plain']);
  assert.deepEqual(names((t) => isAllowed(t, { read_only: true })), ['search']);
  assert.deepEqual(names((t) => isAllowed(t, { tool_names: ['search', 'plain'], read_only: true })), ['search']);
  assert.deepEqual(names((t) => isAllowed(t, {})), ['search', 'delete', 'plain', 'maybe']);
});

test("require_approval: 'always' (the default), 'never', and the object form", () => {
  assert.deepEqual(names((t) => needsApproval(t, undefined)), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => needsApproval(t, null)), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => needsApproval(t, 'always')), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => needsApproval(t, 'never')), []);

  // Read-only tools run freely; everything else asks.
  assert.deepEqual(names((t) => needsApproval(t, { never: { read_only: true } })), ['delete', 'plain', 'maybe']);
  // Only the named tool asks; a tool in neither filter asks too (the default is 'always').
  assert.deepEqual(names((t) => needsApproval(t, { always: { tool_names: ['delete'] } })), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => needsApproval(t, { always: { tool_names: ['delete'] }, never: { tool_names: ['search', 'plain', 'maybe'] } })), ['delete']);
  // In both: asking wins.
  assert.deepEqual(names((t) => needsApproval(t, { always: { tool_names: ['search'] }, never: { read_only: true } })), ['search', 'delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => needsApproval(t, { always: { read_only: false }, never: { tool_names: ['search', 'delete'] } })), ['delete', 'plain', 'maybe']);
  assert.deepEqual(names((t) => needsApproval(t, {})), ['search', 'delete', 'plain', 'maybe']);
});
