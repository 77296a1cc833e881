// The contract is whole: every request field and query parameter the reference API's
// OpenAPI description defines for an endpoint we have a table for is classified, every
// reference endpoint under the families we offer has a table, and each table compiles
// to a checker and to JSON Schema.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { compileTable } from './check.ts';
import { FILE_SEARCH_TOOL_FIELDS } from './endpoints/responses-tools.ts';
import { ALL_ENDPOINTS } from './registry.ts';

const referencePath = path.resolve(import.meta.dirname, '../../../shared/reference/openai-openapi.json');
const haveReference = fs.existsSync(referencePath);
type Json = Record<string, any>;
const spec: Json = haveReference ? JSON.parse(fs.readFileSync(referencePath, 'utf8')) : {};

function resolve(node: Json | undefined): Json | undefined {
  let n = node;
  while (n?.$ref) n = n.$ref.slice(2).split('/').reduce((o: Json, k: string) => o[k], spec);
  return n;
}

/** Top-level property names of a request schema, through $ref, allOf, anyOf and oneOf. */
function properties(schema: Json | undefined, seen = new Set<Json>()): Set<string> {
  const s = resolve(schema);
  const out = new Set<string>();
  if (!s || seen.has(s)) return out;
  seen.add(s);
  for (const k of Object.keys(s.properties ?? {})) out.add(k);
  for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) for (const k of properties(part, seen)) out.add(k);
  return out;
}

function referenceOperation(method: string, p: string): Json | undefined {
  return spec.paths?.[p]?.[method.toLowerCase()];
}

// Reference endpoints under our families that SPEC does not offer: custom voices and
// consents, and deleting fine-tuned models (fine-tuning is not offered).
const NOT_IN_SPEC = [/^\w+ \/audio\/voice/, /^DELETE \/models\/\{model\}$/];
const FAMILY_PREFIXES = [
  '/chat/completions', '/completions', '/responses', '/conversations', '/embeddings', '/moderations', '/images', '/audio', '/files',
  '/batches', '/containers', '/vector_stores', '/skills', '/models',
];

test('every reference field of every endpoint with a table is classified', { skip: !haveReference && 'reference OpenAPI not found' }, () => {
  let checked = 0;
  for (const c of ALL_ENDPOINTS) {
    const op = referenceOperation(c.method, c.path);
    if (!op) continue;
    const content = resolve(op.requestBody)?.content ?? {};
    for (const media of Object.values(content) as Json[]) {
      for (const field of properties(media.schema)) {
        checked++;
        assert.ok(c.body?.fields[field], `${c.method} ${c.path}: body field '${field}' is not classified`);
      }
    }
    for (const param of (op.parameters ?? []).map(resolve) as Json[]) {
      if (param.in !== 'query') continue;
      checked++;
      assert.ok(c.query?.[param.name], `${c.method} ${c.path}: query parameter '${param.name}' is not classified`);
    }
  }
  assert.ok(checked > 250, `only ${checked} reference fields were found: is the reference file complete?`);
});

test('every member of the reference FileSearchTool and its RankingOptions is classified in the tool\'s table', { skip: !haveReference && 'reference OpenAPI not found' }, () => {
  const tool = spec.components.schemas.FileSearchTool as Json;
  for (const member of properties(tool)) {
    if (member !== 'type') assert.ok(FILE_SEARCH_TOOL_FIELDS[member as keyof typeof FILE_SEARCH_TOOL_FIELDS], `file_search member '${member}' is not classified`);
  }
  for (const member of properties(tool.properties.ranking_options)) {
    assert.ok(FILE_SEARCH_TOOL_FIELDS[`ranking_options.${member}` as keyof typeof FILE_SEARCH_TOOL_FIELDS], `file_search member 'ranking_options.${member}' is not classified`);
  }
  assert.equal(FILE_SEARCH_TOOL_FIELDS['ranking_options.hybrid_search'].category, 'refused');
});

test('every reference endpoint under the families we offer has a contract table', { skip: !haveReference && 'reference OpenAPI not found' }, () => {
  const ours = new Set(ALL_ENDPOINTS.map((c) => `${c.method} ${c.path}`));
  for (const [p, item] of Object.entries(spec.paths as Json)) {
    if (p.includes('?') || !FAMILY_PREFIXES.some((f) => p === f || p.startsWith(`${f}/`))) continue;
    for (const method of Object.keys(item).filter((m) => ['get', 'post', 'delete', 'patch', 'put'].includes(m))) {
      const endpoint = `${method.toUpperCase()} ${p}`;
      if (NOT_IN_SPEC.some((r) => r.test(endpoint))) continue;
      assert.ok(ours.has(endpoint), `no contract table for ${endpoint}`);
    }
  }
});

test('contract tables compile: operationIds unique, checkers build, schemas convert to JSON Schema', () => {
  const ids = ALL_ENDPOINTS.map((c) => c.operationId);
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  for (const c of ALL_ENDPOINTS) {
    if (c.body) compileTable(c.body.fields, c.body.required);
    if (c.query) compileTable(c.query);
    for (const rule of [...Object.values(c.body?.fields ?? {}), ...Object.values(c.query ?? {})]) {
      if ((rule.category === 'applied' || rule.category === 'no_effect') && rule.schema) {
        z.toJSONSchema(rule.schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
      }
      if (rule.category === 'refused') assert.ok(rule.note.length > 0, `${c.operationId}: a refused field says why`);
    }
    z.toJSONSchema(c.response.schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' });
  }
});

test('SPEC rows are classified as SPEC says', () => {
  const chat = ALL_ENDPOINTS.find((c) => c.operationId === 'createChatCompletion')!.body!.fields;
  for (const f of ['audio', 'prediction', 'web_search_options', 'moderation']) assert.equal(chat[f]?.category, 'refused', f);
  for (const f of ['prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'stream_options.include_obfuscation']) {
    assert.equal(chat[f]?.category, 'no_effect', f);
  }
  assert.equal(chat.n?.category, 'limited');
  assert.deepEqual(chat.n?.category === 'limited' && chat.n.values, [1]);
  for (const f of ['top_k', 'min_p', 'top_a', 'repetition_penalty', 'verbosity', 'reasoning_effort', 'store', 'metadata', 'user', 'safety_identifier']) {
    assert.equal(chat[f]?.category, 'applied', f);
  }
  const responses = ALL_ENDPOINTS.find((c) => c.operationId === 'createResponse')!.body!.fields;
  for (const f of ['prompt', 'context_management', 'max_tool_calls', 'moderation', 'access_programs']) assert.equal(responses[f]?.category, 'refused', f);
  assert.equal(responses.truncation?.category, 'limited');
});
