// Checks a Responses event stream the way clients rely on it: each event against its
// schema in the OpenAI reference (the committed extract), sequence numbers from 0
// without gaps, and the order rules (an item is added before its deltas, its done
// events follow them, the stream starts with created/in_progress and ends with the
// final response event).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

const reference = JSON.parse(fs.readFileSync(new URL('./__fixtures__/reference-schemas.json', import.meta.url), 'utf8')) as {
  events: Record<string, string>;
  schemas: Record<string, unknown>;
};
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
ajv.addSchema({ $id: 'openai', components: { schemas: reference.schemas } });

export function validateEvent(event: Record<string, unknown>): void {
  const name = reference.events[String(event.type)];
  assert.ok(name, `no reference schema for event type ${String(event.type)}`);
  const validate = ajv.getSchema(`openai#/components/schemas/${name}`)!;
  assert.ok(validate(event), `${String(event.type)} (#${String(event.sequence_number)}) does not match ${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(event).slice(0, 600)}`);
}

export function validateResponseObject(response: unknown): void {
  const validate = ajv.getSchema('openai#/components/schemas/Response')!;
  assert.ok(validate(response), `the response does not match Response: ${ajv.errorsText(validate.errors)}`);
}

type Ev = Record<string, any> & { type: string; sequence_number: number };

/** Every rule at once; returns the final response. */
export function checkStream(events: Ev[]): Record<string, any> {
  events.forEach((e, i) => {
    assert.equal(e.sequence_number, i, `sequence_number of event ${i} (${e.type})`);
    validateEvent(e);
  });
  assert.equal(events[0]?.type, 'response.created');
  assert.equal(events[1]?.type, 'response.in_progress');
  const last = events.at(-1)!;
  assert.ok(['response.completed', 'response.incomplete', 'response.failed'].includes(last.type), last.type);
  const added = new Map<number, string>();
  const done = new Set<number>();
  for (const e of events.slice(2, -1)) {
    if (e.type === 'response.output_item.added') {
      assert.equal(added.has(e.output_index), false, 'an item is added once');
      // Items are sequential: the one before is done.
      for (const [i] of added) if (i !== e.output_index) assert.ok(done.has(i), `item ${i} is done before item ${e.output_index} opens`);
      added.set(e.output_index, e.item.id);
      continue;
    }
    if (typeof e.output_index === 'number') {
      assert.ok(added.has(e.output_index), `${e.type} before its item was added`);
      assert.equal(done.has(e.output_index), false, `${e.type} after its item was done`);
      if (e.item_id !== undefined) assert.equal(e.item_id, added.get(e.output_index), `${e.type} names its item`);
    }
    if (e.type === 'response.output_item.done') done.add(e.output_index);
  }
  for (const [i] of added) assert.ok(done.has(i), `item ${i} is done`);
  const response = last.response;
  assert.equal(response.output.length, added.size);
  return response;
}

/** Reads a raw SSE body: each event's `event:` name and parsed data. */
export function parseSse(text: string): { event: string | undefined; data: Ev }[] {
  return text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) as Ev;
      return { event, data };
    });
}

/** A value against any schema the committed reference extract holds (e.g. CreateModerationResponse). */
export function validateAgainst(schema: string, value: unknown): void {
  const validate = ajv.getSchema(`openai#/components/schemas/${schema}`);
  assert.ok(validate, `the reference extract has no schema ${schema}`);
  assert.ok(validate(value), `the value does not match ${schema}: ${ajv.errorsText(validate.errors)}`);
}

const ownDocs = new WeakMap<object, Ajv2020>();

/** A value against a schema of one of our own published OpenAPI documents (our own objects, such as Decision). */
export function validateAgainstOwn(doc: { components: { schemas: Record<string, unknown> } }, schema: string, value: unknown): void {
  let own = ownDocs.get(doc);
  if (!own) {
    own = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
    own.addSchema({ $id: 'own', components: doc.components });
    ownDocs.set(doc, own);
  }
  const validate = own.getSchema(`own#/components/schemas/${schema}`);
  assert.ok(validate, `the document has no schema ${schema}`);
  assert.ok(validate(value), `the value does not match ${schema}: ${own.errorsText(validate.errors)}`);
}
