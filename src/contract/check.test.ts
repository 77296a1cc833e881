// The checker's answers for bodies that miss a union's discriminator, at the top of a
// list entry and inside a nested union, in a short list and past the head of a long
// one: the error names the object, not its missing key. The checker does not ask zod to
// copy each input into its issues (that doubles every successful parse); it finds the
// object by the path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createChatCompletion } from './endpoints/chat.ts';
import { compileContract } from '../pipeline/contract.ts';
import { ApiError } from '../errors.ts';

const table = compileContract(createChatCompletion).body!;

function refusal(body: Record<string, unknown>): { param: string | null; message: string } {
  try {
    table.check(body);
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return { param: err.param ?? null, message: err.message };
  }
  assert.fail('the body was accepted');
}

test('a list entry without its discriminator is named as a whole', () => {
  const r = refusal({ model: 'agent', messages: [{ content: 'hi' }] });
  assert.equal(r.param, 'messages[0]');
  assert.match(r.message, /expected an object with 'role'/);
});

test('inside a nested union (a content part of a user message) too', () => {
  const r = refusal({ model: 'agent', messages: [{ role: 'user', content: [{ text: 'x' }] }] });
  assert.equal(r.param, 'messages[0].content[0]');
  assert.match(r.message, /expected an object with 'type'/);
});

test('in a long list, found by its head', () => {
  const messages = Array.from({ length: 300 }, (_, i) => (i === 3 ? { content: 'x' } : { role: 'user', content: 'hi' }));
  const r = refusal({ model: 'agent', messages });
  assert.equal(r.param, 'messages[3]');
  assert.match(r.message, /expected an object with 'role'/);
});

test('a discriminator with a wrong value names the key itself', () => {
  const r = refusal({ model: 'agent', messages: [{ role: 'robot', content: 'hi' }] });
  assert.equal(r.param, 'messages[0].role');
});

test('a valid body passes, with the fields the handler reads', () => {
  const checked = table.check({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], unknown_thing: 1 });
  assert.deepEqual(checked.ignored, ['unknown_thing']);
  assert.equal(checked.value.model, 'agent');
});
