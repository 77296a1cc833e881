// Categories that break a JSON body: a valid body for the operation with one place
// made hostile, so the field at fault is known and `param` can be checked.
import fc from 'fast-check';
import { describeSteps, instanceAt, jsonTypeOf, minimalInstance, schemaSlots, type JsonSchema } from './json-schema.ts';
import { fieldExpect, type Case, type Category, type Expect } from './case.ts';
import type { Operation } from './operations.ts';
import {
  anyJsonArb,
  deepArb,
  describeHostile,
  fieldNameArb,
  hostileValue,
  hugeArrayArb,
  hugeStringArb,
  invalidUtf8Arb,
  json,
  numberArb,
  overLimitArb,
  PATHOLOGICAL_SCHEMAS,
  wrongTypeArb,
  type Hostile,
} from './values.ts';
import { baseBody, Holes, picker, request, schemasOf, whoFor, type World } from './world.ts';

type Path = (string | number)[];

/** Paths to every nested place of a value (not the value itself), to a bounded depth. */
function places(value: unknown, depth = 0): Path[] {
  if (depth > 6 || typeof value !== 'object' || value === null) return [];
  const out: Path[] = [];
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    out.push([k]);
    for (const rest of places(v, depth + 1)) out.push([k, ...rest]);
  }
  return out;
}

function setAt(value: unknown, path: Path, leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [k, ...rest] = path as [string | number, ...Path];
  const copy = (Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) }) as Record<string | number, unknown>;
  copy[k] = setAt(copy[k], rest, leaf);
  return copy;
}

const getAt = (value: unknown, path: Path): unknown => path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], value);

const pathText = (path: Path) => path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k)).join('');

interface Ctx {
  world: World;
  op: Operation;
  properties: Record<string, JsonSchema>;
}

function ctxOf(world: World, op: Operation): Ctx {
  return { world, op, properties: op.body ? schemasOf(world, op).objectShape(op.body.schema).properties : {} };
}

/** A case whose body is the base with `field` set to hostile `h` at `path` inside it (path [] = the field itself). */
function edited(ctx: Ctx, category: Category, field: string, path: Path, h: Hostile, expect: Expect, extra: Record<string, unknown> = {}): Case {
  const { world, op } = ctx;
  const who = whoFor(op);
  return {
    category,
    op,
    who,
    note: `${pathText([field, ...path])} := ${describeHostile(h)}`,
    expect,
    build: () => {
      const holes = new Holes();
      const base = { ...baseBody(world, op, who), ...extra };
      const body = { ...base, [field]: path.length ? setAt(base[field], path, holes.value(h)) : holes.value(h) };
      return request(world, op, who, { body: holes.build(body) });
    },
  };
}

/** The oracle for a hostile value at `path` inside `field` of the base body. */
function expectAt(ctx: Ctx, field: string, path: Path, h: Hostile, exact: boolean): Expect {
  const { world, op } = ctx;
  const set = schemasOf(world, op);
  const base = baseBody(world, op, whoFor(op));
  const value = path.length ? setAt(base[field], path, hostileValue(h)) : hostileValue(h);
  return fieldExpect(world, set, op, field, value, exact);
}

/** A top-level field, or a place inside the base body, to put a hostile value. */
function placeArb(ctx: Ctx, withUnknown: boolean): fc.Arbitrary<{ field: string; path: Path; unknown: boolean }> {
  const base = baseBody(ctx.world, ctx.op, whoFor(ctx.op));
  const fields = [...Object.keys(ctx.properties), ...ctx.op.refused];
  const nested = Object.keys(base).flatMap((f) => places(base[f]).map((p) => ({ field: f, path: p, unknown: false })));
  const arbs: fc.Arbitrary<{ field: string; path: Path; unknown: boolean }>[] = [];
  if (fields.length) arbs.push(fc.constantFrom(...fields).map((field) => ({ field, path: [], unknown: false })));
  if (nested.length) arbs.push(fc.constantFrom(...nested));
  if (withUnknown || arbs.length === 0) arbs.push(fieldNameArb.map((field) => ({ field, path: [], unknown: true })));
  return fc.oneof(...arbs);
}

function hostileAt(ctx: Ctx, category: Category, valueArb: fc.Arbitrary<Hostile>): fc.Arbitrary<Case> {
  return fc.tuple(placeArb(ctx, true), valueArb).map(([place, h]) => {
    const expect = place.unknown ? {} : expectAt(ctx, place.field, place.path, h, false);
    // Too deep or not UTF-8: the body parser refuses it (invalid_request, naming the
    // field) before the contract could call it a refused or limited value.
    if (category === 'deep-nesting' || category === 'invalid-utf8') delete expect.code;
    return edited(ctx, category, place.field, place.path, h, expect);
  });
}

export function bodyCategories(world: World, op: Operation): Partial<Record<Category, fc.Arbitrary<Case>>> {
  if (!op.body || op.body.media !== 'json') return {};
  const ctx = ctxOf(world, op);
  const set = schemasOf(world, op);
  const who = whoFor(op);
  const out: Partial<Record<Category, fc.Arbitrary<Case>>> = {};
  const props = Object.entries(ctx.properties);

  out.valid = validArb(ctx);

  const wrongTyped = props.flatMap(([name, schema]) => {
    const arb = wrongTypeArb(set, schema);
    return arb ? [arb.map((h) => edited(ctx, 'wrong-type', name, [], h, fieldExpect(world, set, op, name, hostileValue(h), true)))] : [];
  });
  if (wrongTyped.length) out['wrong-type'] = fc.oneof(...wrongTyped);

  const base = baseBody(world, op, who);
  const nested = Object.keys(base).flatMap((f) => places(base[f]).map((p) => [f, p] as const));
  if (nested.length) {
    out['wrong-type-nested'] = fc.tuple(fc.constantFrom(...nested), fc.constantFrom<unknown>(42, 'x', true, [], {}, [1], { a: 1 })).filter(([[f, p], v]) => jsonTypeOf(getAt(base[f], p)) !== jsonTypeOf(v)).map(([[f, p], v]) => edited(ctx, 'wrong-type-nested', f, p, json(v), expectAt(ctx, f, p, json(v), false)));
  }

  const required = op.body.required;
  if (required.length) {
    out['missing-required'] = fc.constantFrom(...required).map((field) => ({
      category: 'missing-required' as const,
      op,
      who,
      note: `without required '${field}'`,
      expect: world.baseOk.get(op.id) ? { refuse: true, param: { field, exact: true } } : {},
      build: () => {
        const { [field]: _, ...rest } = baseBody(world, op, who);
        return request(world, op, who, { body: Buffer.from(JSON.stringify(rest)) });
      },
    }));
  }

  out['unknown-field'] = fc.tuple(fieldNameArb, anyJsonArb).map(([name, v]) => ({
    category: 'unknown-field' as const,
    op,
    who,
    note: `extra field ${JSON.stringify(name.length > 40 ? `${name.slice(0, 20)}…(${name.length})` : name)} := ${describeHostile(json(v))}`,
    expect: {},
    build: () => request(world, op, who, { body: Buffer.from(JSON.stringify({ ...baseBody(world, op, who), [name]: v })) }),
  }));

  const ranged = props.flatMap(([name, schema]) => {
    const r = set.resolve(schema);
    const numeric = [r, ...((r.anyOf ?? r.oneOf ?? []) as JsonSchema[]).map((b) => set.resolve(b))].find((b) => b.type === 'number' || b.type === 'integer');
    const sized = [r, ...((r.anyOf ?? r.oneOf ?? []) as JsonSchema[]).map((b) => set.resolve(b))].map(overLimitArb).filter((a) => a !== null);
    const arbs: fc.Arbitrary<Case>[] = [];
    if (numeric) arbs.push(numberArb(numeric).map((h) => edited(ctx, 'out-of-range', name, [], h, fieldExpect(world, set, op, name, hostileValue(h), true))));
    for (const a of sized) arbs.push(a.map((h) => edited(ctx, 'out-of-range', name, [], h, fieldExpect(world, set, op, name, hostileValue(h), false))));
    return arbs;
  });
  if (ranged.length) out['out-of-range'] = fc.oneof(...ranged);

  if (op.limited.length) {
    out['limited-value'] = fc
      .tuple(fc.constantFrom(...op.limited), fc.constantFrom<unknown>(2, 0, -1, '1', 'x', 'AUTO', 'priority', 'flex', true, ['text', 'audio'], ['audio'], [], {}, [1], 1.0000001))
      .map(([field, v]) => edited(ctx, 'limited-value', field, [], json(v), fieldExpect(world, set, op, field, v, true)));
  }

  if (op.refused.length) {
    out['refused-field'] = fc
      .tuple(fc.constantFrom(...op.refused), fc.constantFrom<unknown>({}, 'x', 1, true, [], { type: 'content', content: 'x' }, { voice: 'alloy', format: 'mp3' }))
      .map(([field, v]) => edited(ctx, 'refused-field', field, [], json(v), fieldExpect(world, set, op, field, v, true)));
  }

  out['huge-string'] = hostileAt(ctx, 'huge-string', hugeStringArb(world.bodyLimit));
  out['huge-array'] = hostileAt(ctx, 'huge-array', hugeArrayArb);
  out['deep-nesting'] = hostileAt(ctx, 'deep-nesting', deepArb);
  out['invalid-utf8'] = fc.oneof(
    hostileAt(ctx, 'invalid-utf8', invalidUtf8Arb),
    // Invalid bytes in a field name: the name is then reported in a response header.
    invalidUtf8Arb.map((h) => ({
      category: 'invalid-utf8' as const,
      op,
      who,
      note: `field named ${describeHostile(h)}`,
      expect: {},
      build: () => {
        const holes = new Holes();
        return request(world, op, who, { body: holes.build({ ...baseBody(world, op, who), [holes.key(bytesKey(h))]: 1 }) });
      },
    })),
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => ({
      category: 'invalid-utf8' as const,
      op,
      who,
      note: `body of raw bytes ${Buffer.from(bytes).toString('hex')}`,
      expect: {},
      build: () => request(world, op, who, { body: Buffer.from(bytes) }),
    })),
  );

  out['duplicate-keys'] = duplicateKeys(ctx);
  out['proto-body'] = protoBody(ctx);
  out['truncated-json'] = truncated(ctx);

  const slots = props.flatMap(([name, schema]) => schemaSlots(set, schema).map((steps) => ({ name, steps })));
  if (slots.length) {
    const toolChoice = set.resolve(ctx.properties.tool_choice ?? {});
    const forcesTools = JSON.stringify(toolChoice).includes('"required"');
    out['pathological-schema'] = fc
      .tuple(fc.constantFrom(...slots), fc.constantFrom(...PATHOLOGICAL_SCHEMAS.map((_, i) => i)), fc.boolean())
      .map(([slot, i, force]) => {
        const p = PATHOLOGICAL_SCHEMAS[i]!;
        const extra = force && forcesTools && slot.name === 'tools' ? { tool_choice: 'required' } : {};
        return {
          category: 'pathological-schema' as const,
          op,
          who,
          note: `${describeSteps(slot.name, slot.steps)} := ${p.name}${extra.tool_choice ? ' (tool_choice required)' : ''}`,
          expect: {},
          build: () => {
            const holes = new Holes();
            const value = instanceAt(set, ctx.properties[slot.name], slot.steps, holes.value(p.schema), picker(world, op, who), slot.name);
            return request(world, op, who, { body: holes.build({ ...baseBody(world, op, who), ...extra, [slot.name]: value }) });
          },
        };
      });
  }
  return out;
}

/** A key written as a JSON string literal of raw (possibly invalid UTF-8) bytes. */
function bytesKey(h: Hostile): Buffer {
  return h.t === 'bytes' ? Buffer.concat([Buffer.from('"'), Buffer.from(h.hex, 'hex'), Buffer.from('"')]) : Buffer.from(JSON.stringify(describeHostile(h)));
}

/** Sensible values for optional fields, so some requests are valid and get answered 2xx. */
function plausibleArb(ctx: Ctx, schema: JsonSchema, name: string): fc.Arbitrary<unknown> {
  const set = schemasOf(ctx.world, ctx.op);
  const r = set.resolve(schema);
  const branches = ((r.anyOf ?? r.oneOf ?? []) as JsonSchema[]).map((b) => set.resolve(b)).filter((b) => b.type !== 'null');
  const s = branches.length === 1 ? branches[0]! : r;
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...(s.enum as unknown[]));
  if ('const' in s) return fc.constant(s.const);
  if (s.type === 'boolean') return fc.boolean();
  if (s.type === 'integer' || s.type === 'number') {
    const min = typeof s.minimum === 'number' ? s.minimum : -1000;
    const max = typeof s.maximum === 'number' ? Math.min(s.maximum, min + 4096) : min + 4096;
    return s.type === 'integer' ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  }
  if (s.type === 'string' && !s.pattern) return fc.string({ minLength: typeof s.minLength === 'number' ? s.minLength : 0, maxLength: Math.min(typeof s.maxLength === 'number' ? s.maxLength : 24, 24) });
  return fc.constant(minimalInstance(set, schema, picker(ctx.world, ctx.op, whoFor(ctx.op)), name));
}

/**
 * Values of the messages root's optional fields that a schema cannot make valid alone
 * (thinking's budget must stay below max_tokens, a tool needs a schema, ...): with them
 * its valid bodies are accepted often enough to run the engine end to end.
 */
const MESSAGES_VALID: Record<string, unknown[]> = {
  system: ['Answer briefly.', [{ type: 'text', text: 'Answer briefly.', cache_control: { type: 'ephemeral' } }]],
  tools: [[{ name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }]],
  tool_choice: [{ type: 'auto' }, { type: 'none' }, { type: 'auto', disable_parallel_tool_use: true }],
  thinking: [{ type: 'disabled' }, { type: 'adaptive' }],
  output_config: [{ effort: 'low' }, {}],
  output_format: [null],
  cache_control: [{ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }],
  context_management: [{ edits: [{ type: 'clear_thinking_20251015' }] }, null],
  stop_sequences: [['\n\nHuman:'], ['7']],
  metadata: [{ user_id: 'fz-user' }],
  betas: [['fz-beta-2025-01-01']],
};

/**
 * The gateway's forwarded bodies have no schema: fields its upstream takes, with values
 * it takes, so valid requests come whole and streamed (`stream: true`), and some it
 * refuses (an output cap past the model's).
 */
const GATEWAY_VALID: Record<string, unknown[]> = {
  stream: [true, false],
  max_tokens: [1, 64, 1_000_000],
  temperature: [0, 1.2],
  usage: [{ include: true }],
  user: ['fz-user'],
};

function validArb(ctx: Ctx): fc.Arbitrary<Case> {
  const { world, op } = ctx;
  const who = whoFor(op);
  const required = new Set(op.body!.required);
  // Fields whose value is an id or a name are left to the base body (they must exist / be unique).
  const optional: [string, JsonSchema][] = Object.entries(ctx.properties).filter(([n]) => !required.has(n) && !n.endsWith('_id') && n !== 'name' && n !== 'model');
  if (op.passthrough) optional.push(...Object.keys(GATEWAY_VALID).map((n): [string, JsonSchema] => [n, {}]));
  const messages = op.surface === 'messages';
  // The messages root has many optional fields: each is sent less often there, so some bodies stay plain.
  const fieldArbs = optional.map(([n, s]) => {
    const known = messages ? MESSAGES_VALID[n] : op.passthrough ? GATEWAY_VALID[n] : undefined;
    const value = known ? fc.constantFrom(...known) : plausibleArb(ctx, s, n);
    const maybe = messages ? fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: value, weight: 1 }) : fc.option(value, { nil: undefined, freq: 3 });
    return maybe.map((v) => [n, v] as const);
  });
  return fc.tuple(...fieldArbs).map((pairs) => {
    const extra = Object.fromEntries(pairs.filter(([, v]) => v !== undefined));
    return {
      category: 'valid' as const,
      op,
      who,
      note: Object.keys(extra).length ? `base + ${JSON.stringify(extra).slice(0, 200)}` : 'base',
      expect: {},
      build: () => request(world, op, who, { body: Buffer.from(JSON.stringify({ ...baseBody(world, op, who), ...extra })) }),
    };
  });
}

function duplicateKeys(ctx: Ctx): fc.Arbitrary<Case> {
  const { world, op } = ctx;
  const who = whoFor(op);
  const set = schemasOf(world, op);
  const names = Object.keys(baseBody(world, op, who));
  const fields = names.length ? names : Object.keys(ctx.properties).length ? Object.keys(ctx.properties) : ['fz'];
  return fc
    .tuple(fc.constantFrom(...fields), fc.constantFrom<unknown>(42, 'x', null, [], {}, true), fc.boolean(), fc.integer({ min: 2, max: 1000 }))
    .map(([field, other, hostileLast, copies]) => {
      const lastValue = hostileLast ? other : baseBody(world, op, who)[field];
      return {
        category: 'duplicate-keys' as const,
        op,
        who,
        note: `"${field}" × ${copies}, ${hostileLast ? 'last' : 'first'} := ${JSON.stringify(other)}`,
        // The last occurrence wins (JSON.parse); the oracle judges that one. The param may
        // name a member of it (an object missing its required `anchor` names that).
        expect: fieldExpect(world, set, op, field, lastValue, false),
        build: () => {
          const holes = new Holes();
          const base = baseBody(world, op, who);
          const body: Record<string, unknown> = {};
          const good = base[field] ?? 1;
          for (let i = 0; i < copies; i++) {
            const v = (i === copies - 1) === hostileLast ? other : good;
            body[holes.key(JSON.stringify(field))] = v;
          }
          for (const [k, v] of Object.entries(base)) if (k !== field) body[k] = v;
          return request(world, op, who, { body: holes.build(body) });
        },
      };
    });
}

/** `__proto__`, `constructor` and `prototype` keys, top level and nested, plain and \u-escaped (which a text scan misses). */
function protoBody(ctx: Ctx): fc.Arbitrary<Case> {
  const { world, op } = ctx;
  const who = whoFor(op);
  const base = baseBody(world, op, who);
  const nested = [[] as Path, ...Object.keys(base).flatMap((f) => [[f] as Path, ...places(base[f]).map((p) => [f, ...p])])].filter((p) => {
    const v = p.length ? getAt(base, p) : base;
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  });
  const fieldsWithObjects = Object.keys(ctx.properties).filter((n) => schemasOf(world, op).types(ctx.properties[n]).has('object'));
  const targets: Path[] = [...nested, ...fieldsWithObjects.map((f) => [f])];
  const keys = ['"__proto__"', '"\\u005f_proto__"', '"__pro\\u0074o__"', '"constructor"', '"prototype"', '"\\u0063onstructor"'];
  return fc
    .tuple(fc.constantFrom(...targets), fc.constantFrom(...keys), fc.constantFrom<string>('polluted-object', 'constructor-prototype', 'null', 'array', 'string'), fc.nat())
    .map(([path, key, shape, salt]) => {
      // Each case pollutes under its own name, so the probe can say which case did it.
      const marker = `fzp${salt}`;
      const payload =
        shape === 'polluted-object' ? { [marker]: 1 } : shape === 'constructor-prototype' ? { prototype: { [marker]: 1 } } : shape === 'null' ? null : shape === 'array' ? [marker] : marker;
      return {
        category: 'proto-body' as const,
        op,
        who,
        note: `${path.length ? pathText(path) : 'body'}[${key}] := ${JSON.stringify(payload)}`,
        expect: {},
        build: () => {
          const holes = new Holes();
          const b = baseBody(world, op, who);
          const inner = (path.length ? getAt(b, path) : b) as Record<string, unknown> | undefined;
          const withKey = { ...(typeof inner === 'object' && inner !== null ? inner : {}), [holes.key(key)]: payload };
          return request(world, op, who, { body: holes.build(path.length ? setAt(b, path, withKey) : withKey) });
        },
      };
    });
}

function truncated(ctx: Ctx): fc.Arbitrary<Case> {
  const { world, op } = ctx;
  const who = whoFor(op);
  const text = JSON.stringify(baseBody(world, op, who));
  const garbage = ['', ' ', '{', '[', 'nul', 'tru', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":1}{"b":2}', '{"a":1} x', '/*c*/{}', '{"a":"\\x"}', '{"a":01}', '"str"', '[1,2]', '123', 'null', '\uFEFF{}', '{"a":1e}', '{"a":"\n"}', '{"a":"raw NUL \x00"}', '{"a":[1,]}'];
  return fc.oneof(
    fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut)),
    fc.constantFrom(...garbage),
  ).map((t) => {
    let parsed: unknown;
    let parses = true;
    try {
      parsed = JSON.parse(t.replace(/^\uFEFF/, ''));
    } catch {
      parses = false;
    }
    const notObject = parses && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed));
    // Text that is not JSON is refused everywhere; JSON that is not an object is refused by the contract step.
    const refuse = !parses || (op.surface !== 'admin' && notObject && (op.body?.required.length ?? 0) > 0);
    return {
      category: 'truncated-json' as const,
      op,
      who,
      note: `body ${JSON.stringify(t.length > 80 ? `${t.slice(0, 80)}…` : t)} (${Buffer.byteLength(t)} bytes)`,
      expect: refuse ? { refuse: true } : {},
      build: () => request(world, op, who, { body: Buffer.from(t), headers: [['Content-Type', 'application/json']] }),
    };
  });
}
