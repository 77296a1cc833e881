// Evaluates a search's attribute filter (eq, ne, gt, gte, lt, lte, in, nin; nested and /
// or) against one file's attributes. A key the file lacks matches only ne and nin; a
// range comparison matches only values of the same type (numbers by value, strings in
// code-point order), as a comparison across types has no order.
import type { AttributeFilter, Attributes, AttributeValue } from './search-types.ts';

export function matches(filter: AttributeFilter, attributes: Attributes | null): boolean {
  switch (filter.type) {
    case 'and':
      return filter.filters.every((f) => matches(f, attributes));
    case 'or':
      return filter.filters.some((f) => matches(f, attributes));
    default: {
      const has = attributes !== null && Object.hasOwn(attributes, filter.key);
      const actual = has ? attributes[filter.key] : undefined;
      const want = filter.value;
      switch (filter.type) {
        case 'eq':
          return has && !Array.isArray(want) && actual === want;
        case 'ne':
          return !has || Array.isArray(want) || actual !== want;
        case 'in':
          return has && Array.isArray(want) && (want as AttributeValue[]).includes(actual!);
        case 'nin':
          return !has || !Array.isArray(want) || !(want as AttributeValue[]).includes(actual!);
        default:
          return has && !Array.isArray(want) && ordered(filter.type, actual!, want);
      }
    }
  }
}

function ordered(op: 'gt' | 'gte' | 'lt' | 'lte', a: AttributeValue, b: AttributeValue): boolean {
  if (typeof a !== typeof b || typeof a === 'boolean') return false;
  const c = a < b ? -1 : a > b ? 1 : 0;
  return op === 'gt' ? c > 0 : op === 'gte' ? c >= 0 : op === 'lt' ? c < 0 : c <= 0;
}
