// AGENT_API_EMBEDDER_MODULE: an operator's module replaces the built-in embedder when it
// embeds at the index's 384 dimensions; one that does not, or has no createEmbedder,
// stops start-up with a message naming the variable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadEmbedder } from './load-embedder.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-embedder-'));
const write = (name: string, source: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, source);
  return p;
};
const module = (dims: number) => `export function createEmbedder() {
  return { id: 'constant', dimensions: ${dims}, async embed(texts) { return texts.map(() => { const v = new Float32Array(${dims}); v[0] = 1; return v; }); } };
}`;

test('unset: the built-in lexical embedder at 384 dimensions', async () => {
  const e = await loadEmbedder(undefined);
  assert.equal(e.dimensions, 384);
  assert.match(e.id, /^lexical/);
});

test("a module's createEmbedder() is used; a wrong width or a missing export stops start-up", async () => {
  const e = await loadEmbedder(write('good.mjs', module(384)));
  assert.equal(e.id, 'constant');
  assert.deepEqual(Array.from((await e.embed(['x']))[0]!.slice(0, 2)), [1, 0]);
  await assert.rejects(loadEmbedder(write('narrow.mjs', module(128))), /AGENT_API_EMBEDDER_MODULE: the embedder must give 384-dimension vectors \(it gives 128\)/);
  await assert.rejects(loadEmbedder(write('none.mjs', 'export const x = 1;')), /AGENT_API_EMBEDDER_MODULE: .* has no createEmbedder\(\) export/);
  fs.rmSync(dir, { recursive: true, force: true });
});
