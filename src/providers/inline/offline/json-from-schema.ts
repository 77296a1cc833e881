// Builds a value that validates against a JSON Schema: used for tool-call
// arguments and `json_schema` response formats. For each node it lists
// candidates (hints from the conversation first, then safe defaults) and
// keeps the first one the checker accepts.
//
// Schemas come from callers, so a generation is bounded: by the characters the
// request's output cap can show (`minLength: 1e9` or `minItems: 1e9` never get
// built) and by a fixed work budget (values built, schema nodes checked, pattern
// steps, hint look-ups). When either runs out, generation stops and the JSON text
// ends where it stopped, as a model's output cut by max_tokens does.
import { deepEqual, isSchemaObject, jsonType, matches, resolveRef, type JsonSchema, type Meter } from './schema-check.ts';
import { fitLength, fitNumber, formatExample } from './scalar-fitting.ts';
import { stringFromPattern } from './string-from-pattern.ts';

/** What the conversation suggests for a property; see hints.ts. */
export interface Hints {
  /** Candidate values for a property of this name, best first. */
  forProperty(name: string, schema: JsonSchema): unknown[];
  /** Whether the conversation mentions this word or phrase. */
  mentions(text: string): boolean;
}

const NO_HINTS: Hints = { forProperty: () => [], mentions: () => false };

/** What one generation may take. */
export interface GenerationLimits {
  /** Characters of JSON text: what the request's output cap can show. */
  maxChars: number;
  /** Work units (roughly microseconds): values built, schema nodes checked, pattern steps, hint look-ups. */
  maxWork: number;
}

/** At most this much JSON text whatever the output cap (64 K tokens of 4 characters). */
export const MAX_OUTPUT_CHARS = 262_144;
/** Common schemas need a few hundred units; hostile ones stop here, after some tens of milliseconds. */
export const MAX_WORK = 200_000;
export const DEFAULT_LIMITS: GenerationLimits = { maxChars: MAX_OUTPUT_CHARS, maxWork: MAX_WORK };

/** Work units of one hint look-up (a scan of the message, which createHints caps). */
const HINT_COST = 16;

/** Stands for every value once a budget is spent: the JSON text ends there. */
const CUT: unique symbol = Symbol('cut');

/** JSON text of a value for the schema; `complete` is false when a budget cut it short. */
export function generateJson(schema: unknown, hints: Hints = NO_HINTS, limits: GenerationLimits = DEFAULT_LIMITS): { text: string; complete: boolean } {
  const generator = new SchemaValueGenerator(schema, hints, new Budget(limits));
  const value = generator.value(schema, { depth: 0, refs: [], variant: 0, name: undefined });
  const out = jsonPrefix(value, limits.maxChars);
  return { text: out.text, complete: out.complete && !generator.budget.spent };
}

/** The value itself (for tests and callers that want an object); a budget's cut becomes null. */
export function generateFromSchema(schema: unknown, hints: Hints = NO_HINTS, limits: GenerationLimits = DEFAULT_LIMITS): unknown {
  const value = new SchemaValueGenerator(schema, hints, new Budget(limits)).value(schema, { depth: 0, refs: [], variant: 0, name: undefined });
  return withoutCuts(value);
}

/**
 * Generation is synchronous; whatever the work units' calibration (a unit is a cheap
 * enum comparison in one schema and a whole oneOf branch check in another), it never
 * holds the event loop longer than this. Schemas that fit the work budget finish far
 * sooner (a 200-property schema: about 10 ms), so their output stays deterministic.
 */
export const MAX_GENERATION_MS = 10;

/** Counts work and output characters; `spent` once either runs out (or the time cap passes). */
class Budget implements Meter {
  private work: number;
  private chars: number;
  private steps = 0;
  private readonly deadline = performance.now() + MAX_GENERATION_MS;
  constructor(limits: GenerationLimits) {
    this.work = limits.maxWork;
    this.chars = limits.maxChars;
  }
  get spent(): boolean {
    return this.work < 0 || this.chars < 0;
  }
  /** Characters left for output. */
  get room(): number {
    return Math.max(0, this.chars);
  }
  spend(units: number): boolean {
    this.work -= units;
    // The clock is read every 256 steps: cheap, and at most a few hundred microseconds late.
    if ((++this.steps & 255) === 0 && performance.now() > this.deadline) this.work = -1;
    return !this.spent;
  }
  write(chars: number): void {
    this.chars -= chars;
  }
}

interface Ctx {
  depth: number;
  /** $refs entered on the way here, to spot recursion. */
  refs: readonly string[];
  /** >0 asks for a different value than variant 0 (for uniqueItems). */
  variant: number;
  /** Property name this value is for, if any (the key for hints). */
  name: string | undefined;
  /** An extra test scalar candidates must pass (a oneOf must match exactly one branch). */
  accept?: (value: unknown) => boolean;
}

/** Past this depth: no optional properties, empty arrays, null branches first. */
const OPTIONAL_DEPTH = 3;
const MAX_DEPTH = 6;
/** A schema that requires infinite nesting gets null here. */
const HARD_DEPTH = 24;

const MIN_KEYS = ['minimum', 'minLength', 'minItems', 'minProperties', 'minContains'];
const MAX_KEYS = ['maximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains'];

class SchemaValueGenerator {
  constructor(
    private readonly root: unknown,
    private readonly hints: Hints,
    readonly budget: Budget,
  ) {}

  value(schema: unknown, ctx: Ctx): unknown {
    if (!this.budget.spend(1)) return CUT;
    const v = this.build(schema, ctx);
    // Objects and arrays count their own characters as they are built.
    if (v !== CUT && (typeof v !== 'object' || v === null)) this.budget.write(scalarLength(v));
    return v;
  }

  private build(schema: unknown, ctx: Ctx): unknown {
    if (ctx.depth > HARD_DEPTH) return null;
    const { flat, refs } = this.flatten(schema, ctx.refs);
    if (flat === false) return null;
    if (flat === true) return this.anyValue(ctx);
    const c: Ctx = { ...ctx, refs };
    if ('const' in flat) return this.literal(flat.const);
    if (Array.isArray(flat.enum) && flat.enum.length > 0) return this.literal(this.fromEnum(flat, flat.enum, c));
    if (Array.isArray(flat.anyOf) || Array.isArray(flat.oneOf)) return this.fromBranches(flat, c);
    switch (this.chooseType(flat, c)) {
      case 'object':
        return this.object(flat, c);
      case 'array':
        return this.array(flat, c);
      case 'string':
        return this.string(flat, c);
      case 'integer':
        return this.number(flat, true, c);
      case 'number':
        return this.number(flat, false, c);
      case 'boolean':
        return this.boolean(flat, c);
      case 'null':
        return null;
      default:
        return this.anyValue(c);
    }
  }

  /** A value taken whole from the schema (const, enum): an object or array counts its JSON size here. */
  private literal(v: unknown): unknown {
    if (typeof v === 'object' && v !== null) this.budget.write(JSON.stringify(v).length);
    return v ?? null;
  }

  /** Hints for a property, metered (each is a scan of the message). */
  private hinted(name: string | undefined, schema: JsonSchema): unknown[] {
    if (name === undefined || !this.budget.spend(HINT_COST)) return [];
    return this.hints.forProperty(name, schema);
  }

  private mentioned(text: string): boolean {
    return this.budget.spend(HINT_COST) && this.hints.mentions(text);
  }

  // --- $ref and allOf become one plain schema --------------------------------

  private flatten(schema: unknown, refs: readonly string[]): { flat: JsonSchema | boolean; refs: readonly string[] } {
    let cur: unknown = schema;
    let stack = refs;
    for (let guard = 0; guard < 32 && isSchemaObject(cur) && this.budget.spend(1); guard++) {
      if (typeof cur.$ref === 'string') {
        const { $ref, ...rest } = cur;
        stack = [...stack, $ref];
        const target = resolveRef(this.root, $ref) ?? true;
        cur = Object.keys(rest).length > 0 ? this.merge(target, rest, stack) : target;
      } else if (Array.isArray(cur.allOf)) {
        const { allOf, ...rest } = cur;
        cur = allOf.reduce<unknown>((acc, part) => this.merge(acc, part, stack), rest);
      } else {
        break;
      }
    }
    if (typeof cur === 'boolean') return { flat: cur, refs: stack };
    return { flat: isSchemaObject(cur) ? cur : true, refs: stack };
  }

  /** allOf of two schemas as one: the stricter bound wins, lists combine. */
  private merge(a: unknown, b: unknown, refs: readonly string[]): JsonSchema | boolean {
    const fa = this.flatten(a, refs).flat;
    const fb = this.flatten(b, refs).flat;
    if (fa === false || fb === false) return false;
    if (fa === true) return fb;
    if (fb === true) return fa;
    this.budget.spend(Object.keys(fa).length + Object.keys(fb).length);
    const out: JsonSchema = { ...fa };
    for (const [key, bv] of Object.entries(fb)) {
      const av = out[key];
      if (av === undefined) {
        out[key] = bv;
      } else if (key === 'properties' && isSchemaObject(av) && isSchemaObject(bv)) {
        const props: JsonSchema = { ...av };
        for (const [k, v] of Object.entries(bv)) setOwn(props, k, Object.hasOwn(av, k) ? { allOf: [av[k], v] } : v);
        out[key] = props;
      } else if (key === 'required' && Array.isArray(av) && Array.isArray(bv)) {
        out[key] = [...new Set([...av, ...bv])];
      } else if (key === 'type') {
        const ta = Array.isArray(av) ? av : [av];
        const tb = Array.isArray(bv) ? bv : [bv];
        const both = ta.flatMap((t) => (tb.includes(t) ? [t] : t === 'number' && tb.includes('integer') ? ['integer'] : t === 'integer' && tb.includes('number') ? ['integer'] : []));
        out[key] = both.length > 0 ? both : bv;
      } else if (key === 'enum' && Array.isArray(av) && Array.isArray(bv)) {
        const both = av.filter((x) => bv.some((y) => deepEqual(x, y)));
        out[key] = both.length > 0 ? both : bv;
      } else if (MIN_KEYS.includes(key) && typeof av === 'number' && typeof bv === 'number') {
        out[key] = Math.max(av, bv);
      } else if (MAX_KEYS.includes(key) && typeof av === 'number' && typeof bv === 'number') {
        out[key] = Math.min(av, bv);
      } else if (key === 'additionalProperties') {
        out[key] = av === false || bv === false ? false : { allOf: [av, bv] };
      } else if (key === 'items' && isSchemaObject(av) && isSchemaObject(bv)) {
        out[key] = { allOf: [av, bv] };
      } else if (key !== 'anyOf' && key !== 'oneOf') {
        out[key] = bv; // annotations and the like; for anyOf/oneOf keep the first
      }
    }
    return out;
  }

  // --- Choices ---------------------------------------------------------------

  private fromEnum(flat: JsonSchema, options: unknown[], ctx: Ctx): unknown {
    const hinted = this.hinted(ctx.name, flat);
    this.budget.spend(options.length * (1 + hinted.length));
    const candidates = [
      ...options.filter((o) => hinted.some((h) => deepEqual(h, o) || (typeof h === 'string' && typeof o === 'string' && h.toLowerCase() === o.toLowerCase()))),
      ...options.filter((o) => typeof o === 'string' && this.mentioned(o)),
      options[ctx.variant % options.length],
      ...options,
    ];
    return candidates.find((c) => this.fits(flat, c, ctx)) ?? options[0];
  }

  private fromBranches(flat: JsonSchema, ctx: Ctx): unknown {
    const key = Array.isArray(flat.anyOf) ? 'anyOf' : 'oneOf';
    const { [key]: list, ...rest } = flat;
    const branches = list as unknown[];
    // A branch that re-enters a $ref being built goes last (it would recurse);
    // deep down, the simplest branch goes first.
    const rank = (b: unknown): number => (refersTo(b, ctx.refs) ? 10 : 0) + (ctx.depth >= MAX_DEPTH ? simplicity(b) : 0);
    const order = [...branches].sort((a, b) => rank(a) - rank(b));
    const accept = (v: unknown): boolean => this.check(flat, v) && (ctx.accept?.(v) ?? true);
    // `anyOf: []` matches nothing: null stands for the value that cannot exist.
    let fallback: unknown = null;
    let first = true;
    for (const branch of order) {
      // A discarded branch's characters are not output: only the chosen one's count.
      const room = this.budget.room;
      const v = this.build(this.merge(rest, branch, ctx.refs), { ...ctx, accept });
      if (first) fallback = v;
      first = false;
      if (v === CUT || this.check(flat, v)) return v;
      this.budget.write(this.budget.room - room);
    }
    return fallback;
  }

  private chooseType(flat: JsonSchema, ctx: Ctx): string | undefined {
    let types: unknown[];
    if (flat.type !== undefined) types = Array.isArray(flat.type) ? flat.type : [flat.type];
    else if (flat.properties || flat.required || flat.additionalProperties !== undefined) types = ['object'];
    else if (flat.items !== undefined || flat.prefixItems !== undefined) types = ['array'];
    else if (flat.minLength !== undefined || flat.pattern !== undefined || flat.format !== undefined) types = ['string'];
    else if (flat.minimum !== undefined || flat.maximum !== undefined || flat.multipleOf !== undefined) types = ['number'];
    else return undefined;
    if (types.length <= 1) return types[0] as string | undefined;
    if (ctx.depth >= MAX_DEPTH && types.includes('null')) return 'null';
    const hinted = this.hinted(ctx.name, flat);
    for (const h of hinted) {
      const t = jsonType(h);
      if (types.includes(t)) return t;
      if (t === 'integer' && types.includes('number')) return 'number';
    }
    return (types.find((t) => t !== 'null') ?? 'null') as string;
  }

  private anyValue(ctx: Ctx): unknown {
    const hinted = this.hinted(ctx.name, {});
    return hinted[0] ?? (ctx.variant > 0 ? `example ${ctx.variant + 1}` : 'example');
  }

  // --- Types -----------------------------------------------------------------

  private object(flat: JsonSchema, ctx: Ctx): Record<string, unknown> {
    const props = isSchemaObject(flat.properties) ? flat.properties : {};
    const required = new Set(Array.isArray(flat.required) ? flat.required.filter((k): k is string => typeof k === 'string') : []);
    const out: Record<string, unknown> = {};
    const child = (name: string): Ctx => ({ depth: ctx.depth + 1, refs: ctx.refs, variant: ctx.variant, name });
    let count = 0;
    /** Adds a member; false once the budget is spent (the member is then CUT, where the text ends). */
    const add = (key: string, schema: unknown): boolean => {
      this.budget.write(key.length + (count++ > 0 ? 4 : 3)); // "key": and a comma
      const v = this.value(schema, child(key));
      setOwn(out, key, v);
      return v !== CUT;
    };
    this.budget.write(2);
    for (const [key, propSchema] of Object.entries(props)) {
      const include =
        required.has(key) ||
        (ctx.depth < OPTIONAL_DEPTH && !refersTo(propSchema, ctx.refs)) ||
        (isSchemaObject(propSchema) && this.hinted(key, propSchema).length > 0);
      if (include && !add(key, propSchema)) return out;
    }
    const extra = flat.additionalProperties === undefined ? true : flat.additionalProperties;
    for (const key of required) if (!Object.hasOwn(out, key) && !add(key, extra)) return out;
    if (typeof flat.minProperties === 'number' && extra !== false) {
      for (let i = 1; count < flat.minProperties && i < 1000; i++) {
        const key = `property_${i}`;
        if (!Object.hasOwn(out, key) && !add(key, extra)) return out;
      }
    }
    return out;
  }

  private array(flat: JsonSchema, ctx: Ctx): unknown[] {
    const tuple: unknown[] = Array.isArray(flat.prefixItems) ? flat.prefixItems : Array.isArray(flat.items) ? flat.items : [];
    const rest = Array.isArray(flat.prefixItems) ? flat.items : Array.isArray(flat.items) ? flat.additionalItems : flat.items;
    const min = typeof flat.minItems === 'number' ? flat.minItems : 0;
    let max = typeof flat.maxItems === 'number' ? flat.maxItems : Infinity;
    if (rest === false) max = Math.min(max, tuple.length);
    // Items that re-enter a $ref being built would nest forever: only the minimum.
    const wanted = ctx.depth >= MAX_DEPTH || refersTo(flat, ctx.refs) ? 0 : Math.max(tuple.length, 1);
    const count = Math.min(Math.max(wanted, min), max);
    const items: unknown[] = [];
    this.budget.write(2);
    // `count` may be 1e9: the budgets end the loop long before.
    for (let i = 0; i < count; i++) {
      const itemSchema = i < tuple.length ? tuple[i] : rest ?? true;
      if (i > 0) this.budget.write(1);
      let item: unknown;
      for (let attempt = 0; attempt < 12; attempt++) {
        const room = this.budget.room;
        item = this.value(itemSchema, { depth: ctx.depth + 1, refs: ctx.refs, variant: ctx.variant + i + attempt * Math.max(count, 1), name: undefined });
        if (item === CUT || flat.uniqueItems !== true || !this.budget.spend(items.length) || !items.some((x) => deepEqual(x, item))) break;
        this.budget.write(this.budget.room - room); // a duplicate is dropped, its characters too
      }
      items.push(item);
      if (item === CUT) return items;
    }
    if (flat.contains !== undefined && !items.some((x) => this.check(flat.contains, x))) {
      const needed = this.value(flat.contains, { depth: ctx.depth + 1, refs: ctx.refs, variant: ctx.variant, name: undefined });
      if (items.length < max) items.push(needed);
      else if (items.length > 0) items[items.length - 1] = needed;
    }
    return items;
  }

  private string(flat: JsonSchema, ctx: Ctx): string {
    const v = ctx.variant;
    // A string longer than the room left is never built; one that needs more (minLength)
    // is cut to the room, and spends the budget.
    const room = Math.max(0, this.budget.room - 2);
    const candidates: string[] = [];
    for (const h of this.hinted(ctx.name, flat)) {
      if (typeof h === 'string') candidates.push(h);
      else if (typeof h === 'number') candidates.push(String(h));
    }
    if (typeof flat.format === 'string') {
      const f = formatExample(flat.format, v);
      if (f !== undefined) candidates.push(f);
    }
    if (typeof flat.pattern === 'string') {
      const p = stringFromPattern(flat.pattern, v, room);
      if (p !== undefined) candidates.push(p);
    }
    candidates.push(v > 0 ? `example ${v + 1}` : 'example');
    const ok = candidates.find((c) => c.length <= room && this.fits(flat, c, ctx));
    if (ok !== undefined) return ok;
    const fitted = candidates.map((c) => fitLength(c, flat, v, room));
    if (typeof flat.minLength === 'number' && flat.minLength > room) {
      // Cut short, so nothing fits after it: the start of a string that would match, if any.
      const { minLength: _, ...rest } = flat;
      const start = fitted.find((c) => this.fits(rest, c, ctx)) ?? (fitted[fitted.length - 1] as string);
      this.budget.write(room + 1);
      return start;
    }
    return fitted.find((c) => this.fits(flat, c, ctx)) ?? (fitted[fitted.length - 1] as string);
  }

  private number(flat: JsonSchema, integer: boolean, ctx: Ctx): number {
    const candidates: number[] = [];
    {
      for (const h of this.hinted(ctx.name, flat)) {
        const n = typeof h === 'number' ? h : typeof h === 'string' && h.trim() !== '' ? Number(h) : NaN;
        if (Number.isFinite(n)) candidates.push(n);
      }
    }
    candidates.push(1 + ctx.variant, 0);
    if (!integer) candidates.push(0.5 + ctx.variant); // for "a number but not an integer" (oneOf)
    let first: number | undefined;
    for (const c of candidates) {
      const fitted = fitNumber(c, flat, integer);
      first ??= fitted;
      if (this.fits(flat, fitted, ctx)) return fitted;
    }
    return first ?? 0;
  }

  private boolean(flat: JsonSchema, ctx: Ctx): boolean {
    const hinted = this.hinted(ctx.name, flat).find((h) => typeof h === 'boolean');
    const preferred = typeof hinted === 'boolean' ? hinted : ctx.variant % 2 === 1;
    return this.fits(flat, preferred, ctx) ? preferred : !preferred;
  }

  private fits(flat: JsonSchema, value: unknown, ctx: Ctx): boolean {
    return this.check(flat, value) && (ctx.accept?.(value) ?? true);
  }

  /** The checker, metered by this generation's budget. */
  private check(schema: unknown, value: unknown): boolean {
    return matches(schema, value, this.root, 0, this.budget);
  }
}

// --- Helpers ---------------------------------------------------------------

/** About the JSON length of a scalar (escapes aside). */
function scalarLength(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v === 'number') return String(v).length;
  if (typeof v === 'boolean') return v ? 4 : 5;
  return 4; // null
}

/**
 * JSON text of a generated value, as JSON.stringify writes it, ending at the first
 * CUT or at `maxChars`. Keys come from the schema, values from generation; depths are
 * bounded by the generator and the request's schema budget.
 */
export function jsonPrefix(value: unknown, maxChars: number): { text: string; complete: boolean } {
  const parts: string[] = [];
  let length = 0;
  let complete = true;
  const put = (s: string): boolean => {
    if (length + s.length > maxChars) {
      parts.push(s.slice(0, maxChars - length));
      length = maxChars;
      complete = false;
      return false;
    }
    parts.push(s);
    length += s.length;
    return true;
  };
  const write = (v: unknown): boolean => {
    if (v === CUT) {
      complete = false;
      return false;
    }
    if (Array.isArray(v)) {
      if (!put('[')) return false;
      for (let i = 0; i < v.length; i++) if ((i > 0 && !put(',')) || !write(v[i])) return false;
      return put(']');
    }
    if (typeof v === 'object' && v !== null) {
      if (!put('{')) return false;
      let first = true;
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined) continue;
        if (x === CUT) return write(x);
        if (!put((first ? '' : ',') + JSON.stringify(k) + ':') || !write(x)) return false;
        first = false;
      }
      return put('}');
    }
    return put(JSON.stringify(v) ?? 'null');
  };
  write(value);
  return { text: parts.join(''), complete };
}

function withoutCuts(v: unknown): unknown {
  if (v === CUT || v === undefined) return null;
  if (Array.isArray(v)) return v.map(withoutCuts);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, withoutCuts(x));
    return out;
  }
  return v;
}

/** Sets a key even if it is "__proto__", without touching the prototype. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Whether a property schema points straight back into a $ref being built. */
function refersTo(schema: unknown, refs: readonly string[]): boolean {
  if (!isSchemaObject(schema) || refs.length === 0) return false;
  if (typeof schema.$ref === 'string' && refs.includes(schema.$ref)) return true;
  const nested = [schema.items, ...(Array.isArray(schema.anyOf) ? schema.anyOf : []), ...(Array.isArray(schema.oneOf) ? schema.oneOf : [])];
  return nested.some((n) => isSchemaObject(n) && typeof n.$ref === 'string' && refs.includes(n.$ref));
}

/** Lower is simpler: null and scalars end a recursion, refs may not. */
function simplicity(branch: unknown): number {
  if (!isSchemaObject(branch)) return 1;
  if (branch.type === 'null') return 0;
  if (branch.$ref !== undefined || branch.type === 'object' || branch.properties) return 3;
  if (branch.type === 'array' || branch.items) return 2;
  return 1;
}
