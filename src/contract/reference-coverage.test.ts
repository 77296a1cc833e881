// The contract is whole: every request field and query parameter the reference API's
// OpenAPI description defines for an endpoint we have a table for is classified, every
// reference endpoint under the families we offer has a table, and each table compiles
// to a checker and to JSON Schema. The reference is read from its committed extract
// (src/contract/__fixtures__/reference-coverage.json, made by `npm run extract:reference`),
// so a clean clone without ../shared/reference checks it all the same; a missing extract
// fails, and where the reference is present a stale extract fails too.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { z } from 'zod';
import { compileTable } from './check.ts';
import { FILE_SEARCH_TOOL_FIELDS, IMAGE_GENERATION_TOOL_FIELDS, MCP_TOOL_FIELDS, WEB_SEARCH_PREVIEW_TOOL_FIELDS, WEB_SEARCH_TOOL_FIELDS } from './endpoints/responses-tools.ts';
import {
  COVERAGE_FIXTURE,
  coverageExtract,
  EXTRACT_COMMAND,
  fixtureText,
  readFixture,
  referencePath,
  SCHEMAS_FIXTURE,
  schemasExtract,
  type CoverageExtract,
} from './reference-extract.test-support.ts';
import { ALL_ENDPOINTS } from './registry.ts';

const extract = readFixture<CoverageExtract>(COVERAGE_FIXTURE);

// Reference endpoints under our families that SPEC does not offer: custom voices and
// consents, and deleting fine-tuned models (fine-tuning is not offered).
const NOT_IN_SPEC = [/^\w+ \/audio\/voice/, /^DELETE \/models\/\{model\}$/];
const FAMILY_PREFIXES = [
  '/chat/completions', '/completions', '/responses', '/conversations', '/embeddings', '/moderations', '/images', '/audio', '/files',
  '/batches', '/containers', '/vector_stores', '/skills', '/models',
];

test('every reference field of every endpoint with a table is classified', () => {
  let checked = 0;
  for (const c of ALL_ENDPOINTS) {
    const op = extract.operations[`${c.method} ${c.path}`];
    if (!op) continue;
    for (const field of op.body) {
      checked++;
      assert.ok(c.body?.fields[field], `${c.method} ${c.path}: body field '${field}' is not classified`);
    }
    for (const param of op.query) {
      checked++;
      assert.ok(c.query?.[param], `${c.method} ${c.path}: query parameter '${param}' is not classified`);
    }
  }
  assert.ok(checked > 250, `only ${checked} reference fields were found: is the extract complete?`);
});

test('every member of the reference FileSearchTool and its RankingOptions is classified in the tool\'s table', () => {
  assert.ok(extract.file_search_tool.members.includes('vector_store_ids'), 'the extract holds the tool');
  for (const member of extract.file_search_tool.members) {
    assert.ok(FILE_SEARCH_TOOL_FIELDS[member as keyof typeof FILE_SEARCH_TOOL_FIELDS], `file_search member '${member}' is not classified`);
  }
  for (const member of extract.file_search_tool.ranking_options) {
    assert.ok(FILE_SEARCH_TOOL_FIELDS[`ranking_options.${member}` as keyof typeof FILE_SEARCH_TOOL_FIELDS], `file_search member 'ranking_options.${member}' is not classified`);
  }
  assert.equal(FILE_SEARCH_TOOL_FIELDS['ranking_options.hybrid_search'].category, 'refused');
});

test('every member of the reference MCPTool, WebSearchTool, WebSearchPreviewTool and ImageGenTool is classified in its table', () => {
  const tables = { mcp: MCP_TOOL_FIELDS, web_search: WEB_SEARCH_TOOL_FIELDS, web_search_preview: WEB_SEARCH_PREVIEW_TOOL_FIELDS, image_generation: IMAGE_GENERATION_TOOL_FIELDS } as const;
  for (const [tool, table] of Object.entries(tables)) {
    const members = extract.hosted_tools[tool as keyof typeof tables];
    assert.ok(members.length > 2, `the extract holds ${tool}`);
    for (const member of members) assert.ok((table as Record<string, unknown>)[member], `${tool} member '${member}' is not classified`);
  }
  assert.equal(MCP_TOOL_FIELDS.connector_id.category, 'refused');
});

test('every reference endpoint under the families we offer has a contract table', () => {
  const ours = new Set(ALL_ENDPOINTS.map((c) => `${c.method} ${c.path}`));
  let seen = 0;
  for (const endpoint of Object.keys(extract.operations)) {
    const p = endpoint.slice(endpoint.indexOf(' ') + 1);
    if (p.includes('?') || !FAMILY_PREFIXES.some((f) => p === f || p.startsWith(`${f}/`))) continue;
    seen++;
    if (NOT_IN_SPEC.some((r) => r.test(endpoint))) continue;
    assert.ok(ours.has(endpoint), `no contract table for ${endpoint}`);
  }
  assert.ok(seen > 50, `only ${seen} reference endpoints under our families: is the extract complete?`);
});

// Skipped only where the reference itself is absent (a clean clone); the checks above ran on the extract.
const reference = referencePath();
test('the committed extracts are what the reference gives now', { skip: !reference && `the reference OpenAPI is not here (set REFERENCE_OPENAPI to check the extracts against it)` }, () => {
  const text = fs.readFileSync(reference!, 'utf8');
  const stale = `is stale: run ${EXTRACT_COMMAND}`;
  assert.equal(fs.readFileSync(COVERAGE_FIXTURE, 'utf8'), fixtureText(coverageExtract(text)), `${COVERAGE_FIXTURE} ${stale}`);
  assert.equal(fs.readFileSync(SCHEMAS_FIXTURE, 'utf8'), fixtureText(schemasExtract(text)), `${SCHEMAS_FIXTURE} ${stale}`);
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
