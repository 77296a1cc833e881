// All cases of a run: every (operation, category) pair that applies, weighted, sampled
// by fast-check from one seed, so a run is reproducible from FUZZ_SEED and FUZZ_RUNS.
import fc from 'fast-check';
import type { Case, Category } from './case.ts';
import { bodyCategories } from './cases-body.ts';
import { formCategories } from './cases-form.ts';
import { requestCategories } from './cases-http.ts';
import type { Surface } from './operations.ts';
import type { World } from './world.ts';

/** Relative weight of each category; the hostile JSON ones are the bulk. */
const WEIGHTS: Record<Category, number> = {
  valid: 6,
  'wrong-type': 8,
  'wrong-type-nested': 5,
  'missing-required': 3,
  'unknown-field': 5,
  'out-of-range': 7,
  'limited-value': 5,
  'refused-field': 4,
  'huge-string': 3,
  'huge-array': 3,
  'deep-nesting': 6,
  'invalid-utf8': 4,
  'duplicate-keys': 3,
  'proto-body': 5,
  'proto-query': 4,
  'query-hostile': 6,
  'truncated-json': 4,
  'content-type': 3,
  'broken-multipart': 2,
  'multipart-fields': 4,
  'proto-form': 2,
  'bad-headers': 5,
  'bad-path': 4,
  'oversized-body': 2,
  'other-account': 6,
  'limited-key': 3,
  'bad-auth': 2,
  'key-headers': 1,
  'wrong-method': 2,
  'pathological-schema': 8,
};

/**
 * Weight of each operation by root: the compatible API's weigh more than the admin
 * API's; the messages root's few operations weigh as much as /v1's, so the root gets a
 * modest share of the run, about as large as the admin API's; the gateway's as much
 * again (its forwarded requests cost a round trip to the fake upstream, little more).
 */
const SURFACE_WEIGHT: Record<Surface, number> = { v1: 2, admin: 1, messages: 2, gateway: 2 };
const surfaceWeight = (surface: Surface) => SURFACE_WEIGHT[surface];
/**
 * Categories a root's few operations need more of than their share: valid messages,
 * which run the engine end to end; valid gateway requests, which go upstream and back
 * (streamed too) and are charged its cost.
 */
const BOOST: Partial<Record<Surface, Partial<Record<Category, number>>>> = { messages: { valid: 5 }, gateway: { valid: 4 } };
const pairWeight = (surface: Surface, category: Category) => surfaceWeight(surface) * (BOOST[surface]?.[category] ?? 1);

const SURFACES: readonly string[] = Object.keys(SURFACE_WEIGHT);

/** `only`: categories and roots (`gateway`) to focus a run on; none of one kind named: all of that kind. */
function allCases(world: World, only?: readonly string[]): { arbitrary: fc.Arbitrary<Case>; pairs: { op: string; category: Category }[] } {
  const weighted: { arbitrary: fc.Arbitrary<Case>; weight: number }[] = [];
  const pairs: { op: string; category: Category; arbitrary: fc.Arbitrary<Case>; surface: Surface }[] = [];
  const onlyRoots = only?.filter((x) => SURFACES.includes(x)) ?? [];
  const onlyCategories = only?.filter((x) => !SURFACES.includes(x)) ?? [];
  for (const op of world.ops) {
    if (onlyRoots.length && !onlyRoots.includes(op.surface)) continue;
    const categories = { ...requestCategories(world, op), ...bodyCategories(world, op), ...formCategories(world, op) };
    for (const [category, arbitrary] of Object.entries(categories) as [Category, fc.Arbitrary<Case>][]) {
      if (!onlyCategories.length || onlyCategories.includes(category)) pairs.push({ op: op.id, category, arbitrary, surface: op.surface });
    }
  }
  // A category's share of the run is its weight, however many operations it applies to.
  for (const p of pairs) {
    const applicable = pairs.filter((q) => q.category === p.category).reduce((sum, q) => sum + pairWeight(q.surface, q.category), 0);
    weighted.push({ arbitrary: p.arbitrary, weight: Math.max(1, Math.round((1000 * WEIGHTS[p.category] * pairWeight(p.surface, p.category)) / applicable)) });
  }
  return { arbitrary: fc.oneof(...weighted), pairs };
}

export function sampleCases(world: World, seed: number, count: number, only?: readonly string[]): Case[] {
  const { arbitrary, pairs } = allCases(world, only);
  const cases = fc.sample(arbitrary, { seed, numRuns: count });
  // Make sure every applicable pair is sent at least once, whatever the count.
  const seen = new Set(cases.map((c) => `${c.op.id} ${c.category}`));
  const missing = pairs.filter((p) => !seen.has(`${p.op} ${p.category}`));
  if (missing.length) {
    for (const p of missing) {
      const op = world.ops.find((o) => o.id === p.op)!;
      const arb = ({ ...requestCategories(world, op), ...bodyCategories(world, op), ...formCategories(world, op) } as Record<string, fc.Arbitrary<Case>>)[p.category]!;
      cases.push(fc.sample(arb, { seed: seed + cases.length, numRuns: 1 })[0]!);
    }
  }
  return cases;
}
