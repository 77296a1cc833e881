// Categories that break a multipart form in one place, so the field at fault is known:
// a required part left out, a refused field sent (also as `name[key]`, as the openai SDK
// sends objects), values outside a field's schema, a file where text belongs and text
// where a file belongs, a part repeated, bad filenames, an oversized text part, unknown
// parts, and field names that reach for a prototype. The oracle is the published
// schema (judged with ajv), as for JSON bodies.
import fc from 'fast-check';
import { fieldExpect, type Case, type Category, type Expect } from './case.ts';
import type { Operation } from './operations.ts';
import { baseForm, formRequest, isFileProperty, schemasOf, whoFor, type FormPart, type World } from './world.ts';

interface Variant {
  note: string;
  expect: Expect;
  parts: (base: FormPart[]) => FormPart[];
}

const without = (parts: FormPart[], name: string) => parts.filter((p) => p.name !== name);
const refuseNaming = (field: string, exact = true): Expect => ({ refuse: true, param: { field, exact } });

/** A text part's value, judged by the field's schema as the server will see it. */
const TEXTS = ['', ' ', 'x', 'batch', 'BATCH', 'ключ', 'a\u0000b', 'null', '1', 'x'.repeat(300), 'p'.repeat(70 * 1024)];
/** Over the parser's text part limit: refused naming the field, whatever its schema. */
const TEXT_PART_LIMIT = 64 * 1024;

function variants(world: World, op: Operation): { fields: Variant[]; proto: Variant[] } {
  const set = schemasOf(world, op);
  const { properties, required } = set.objectShape(op.body!.schema);
  const ok = world.baseOk.get(op.id) === true;
  const judged = (e: Expect): Expect => (ok ? e : {});
  const fileFields = Object.keys(properties).filter((n) => isFileProperty(properties[n]!));
  const textFields = Object.keys(properties).filter((n) => !isFileProperty(properties[n]!));
  const file = (name: string, filename = 'fz.txt', value: string | Buffer = 'fuzz\n'): FormPart => ({ name, value, filename });
  const fields: Variant[] = [];
  const inBase = new Set(baseForm(world, op, 'A').map((p) => p.name));

  for (const name of required) fields.push({ note: `without the required '${name}'`, expect: judged(refuseNaming(name)), parts: (b) => without(b, name) });
  for (const name of op.refused) {
    fields.push({ note: `refused '${name}' as a text part`, expect: judged({ ...refuseNaming(name), code: 'unsupported_parameter' }), parts: (b) => [...b, { name, value: 'x' }] });
    fields.push({ note: `refused '${name}[k]' (an object, as the SDK sends it)`, expect: judged({ ...refuseNaming(name), code: 'unsupported_parameter' }), parts: (b) => [...b, { name: `${name}[anchor]`, value: 'created_at' }] });
  }
  for (const name of textFields) {
    for (const text of TEXTS) {
      const expect = text.length > TEXT_PART_LIMIT ? refuseNaming(name) : fieldExpect(world, set, op, name, text, true);
      fields.push({ note: `${name} := ${JSON.stringify(text.length > 40 ? `${text.slice(0, 12)}… (${text.length})` : text)}`, expect: judged(expect), parts: (b) => [...without(b, name), { name, value: text }] });
    }
    // Twice: the base's part repeated; an optional field the base leaves out is sent twice with a text of its own (then judged by nothing but the shape).
    fields.push({
      note: `'${name}' twice`,
      expect: judged(inBase.has(name) ? refuseNaming(name) : {}),
      parts: (b) => (b.some((p) => p.name === name) ? [...b, ...b.filter((p) => p.name === name)] : [...b, { name, value: 'x' }, { name, value: 'x' }]),
    });
    fields.push({ note: `'${name}' sent as a file part`, expect: judged(refuseNaming(name)), parts: (b) => [...without(b, name), file(name, 'value.txt', String(b.find((p) => p.name === name)?.value ?? 'x'))] });
  }
  for (const name of fileFields) {
    fields.push({ note: `'${name}' as a text part`, expect: judged(refuseNaming(name)), parts: (b) => [...without(b, name), { name, value: 'not a file' }] });
    fields.push({ note: `'${name}' twice`, expect: judged(refuseNaming(name)), parts: (b) => [...b, file(name, 'second.txt')] });
    fields.push({ note: `'${name}' with an empty filename`, expect: judged(refuseNaming(name)), parts: (b) => [...without(b, name), file(name, '')] });
    fields.push({ note: `'${name}' with a filename of 300 characters`, expect: judged(refuseNaming(name)), parts: (b) => [...without(b, name), file(name, `${'n'.repeat(296)}.txt`)] });
    fields.push({ note: `'${name}' with a path as filename`, expect: {}, parts: (b) => [...without(b, name), file(name, '../../etc/passwd')] });
    fields.push({ note: `'${name}' with a non-ASCII filename`, expect: {}, parts: (b) => [...without(b, name), file(name, 'отчёт 名前.txt')] });
    fields.push({ note: `'${name}' empty`, expect: {}, parts: (b) => [...without(b, name), file(name, 'empty.bin', Buffer.alloc(0))] });
    fields.push({ note: `'${name}' of 200 KB of random bytes`, expect: {}, parts: (b) => [...without(b, name), file(name, 'r.bin', Buffer.from(Array.from({ length: 200 * 1024 }, (_, i) => (i * 7919) % 256)))] });
    fields.push({ note: `'${name}' with Content-Transfer-Encoding: base64`, expect: {}, parts: (b) => [...without(b, name), { ...file(name), headers: ['Content-Transfer-Encoding: base64'] }] });
  }
  fields.push({ note: 'an unknown text part', expect: {}, parts: (b) => [...b, { name: 'fz_unknown', value: 'v' }] });
  fields.push({ note: 'an unknown file part', expect: {}, parts: (b) => [...b, file('fz_unknown_file', 'u.bin')] });
  fields.push({ note: 'an unknown part of 70 KB', expect: {}, parts: (b) => [...b, { name: 'fz_big', value: 'b'.repeat(70 * 1024) }] });
  fields.push({ note: 'the parts in reverse order', expect: {}, parts: (b) => [...b].reverse() });

  const proto: Variant[] = ['__proto__', '__proto__[fzp]', 'constructor[prototype][fzp]', 'prototype[fzp]', 'x[__proto__]', 'constructor', 'toString', 'hasOwnProperty[fzp]'].map((name) => ({
    note: `a part named ${name}`,
    expect: {},
    parts: (b) => [...b, { name, value: 'polluted' }],
  }));
  proto.push({ note: 'a file part named __proto__', expect: {}, parts: (b) => [...b, file('__proto__', 'p.txt')] });
  return { fields, proto };
}

export function formCategories(world: World, op: Operation): Partial<Record<Category, fc.Arbitrary<Case>>> {
  if (op.body?.media !== 'multipart') return {};
  const who = whoFor(op);
  const { fields, proto } = variants(world, op);
  const mk = (category: Category) => (v: Variant): Case => ({
    category,
    op,
    who,
    note: `form: ${v.note}`,
    expect: v.expect,
    build: () => formRequest(world, op, who, v.parts(baseForm(world, op, who))),
  });
  return {
    'multipart-fields': fc.constantFrom(...fields).map(mk('multipart-fields')),
    'proto-form': fc.constantFrom(...proto).map(mk('proto-form')),
  };
}
