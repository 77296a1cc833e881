// Every request field the installed vendor SDKs define for message creation and token
// counting (both generations, 1.x and the 0.x alias, their beta variants included) is
// classified in the messages contract table: a new SDK field fails here until the table
// says what the service does with it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { countMessageTokens, createMessage } from './messages.ts';

const require = createRequire(import.meta.url);

/** The top-level fields of an exported interface in a .d.ts file (4-space indented members). */
function fieldsOf(file: string, iface: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf(`export interface ${iface} {`);
  assert.ok(start >= 0, `${iface} not found in ${file}`);
  const body = text.slice(start, text.indexOf('\n}', start));
  return [...body.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]!);
}

const sdks = ['@anthropic-ai/sdk', 'anthropic-sdk-0'].map((name) => {
  // The package's folder: its main entry sits at the top (package.json is not in its exports).
  const root = path.dirname(require.resolve(name));
  return { name, version: (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version, root };
});

for (const sdk of sdks) {
  const plain = path.join(sdk.root, 'resources/messages/messages.d.ts');
  const beta = path.join(sdk.root, 'resources/beta/messages/messages.d.ts');
  test(`${sdk.name} ${sdk.version}: every message-create field is in the contract table`, () => {
    const fields = new Set([...fieldsOf(plain, 'MessageCreateParamsBase'), ...fieldsOf(beta, 'MessageCreateParamsBase')]);
    assert.ok(fields.has('messages') && fields.has('max_tokens'), 'the parser found the interface');
    const missing = [...fields].filter((f) => !(f in createMessage.body.fields));
    assert.deepEqual(missing, [], `fields the SDK sends that the table lacks: ${missing.join(', ')}`);
  });
  test(`${sdk.name} ${sdk.version}: every count_tokens field is in the contract table`, () => {
    const fields = new Set([...fieldsOf(plain, 'MessageCountTokensParams'), ...fieldsOf(beta, 'MessageCountTokensParams')]);
    assert.ok(fields.has('messages'));
    const missing = [...fields].filter((f) => !(f in countMessageTokens.body.fields));
    assert.deepEqual(missing, [], `fields the SDK sends that the table lacks: ${missing.join(', ')}`);
  });
}
