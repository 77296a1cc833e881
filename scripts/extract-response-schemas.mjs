#!/usr/bin/env node
// Extracts, from the OpenAI OpenAPI reference, the schemas of the Responses streaming
// events and of the response object, with every component they reference, into
// src/api/responses/__fixtures__/reference-schemas.json. The tests validate our events
// against it; it is committed so they run where the reference is absent.
//   node scripts/extract-response-schemas.mjs [path/to/openai-openapi.json]
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const source = process.argv[2] ?? path.resolve(root, '../shared/reference/openai-openapi.json');
const spec = JSON.parse(fs.readFileSync(source, 'utf8'));
const all = spec.components.schemas;

const roots = Object.keys(all).filter((k) => /^Response[A-Za-z]*Event$/.test(k) && all[k].properties?.type?.enum);
roots.push('Response', 'ResponseStreamEvent');
const picked = {};
const visit = (name) => {
  if (picked[name] || !all[name]) return;
  picked[name] = all[name];
  JSON.stringify(all[name], (key, value) => {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) visit(value.slice('#/components/schemas/'.length));
    return value;
  });
};
roots.forEach(visit);
const events = Object.fromEntries(roots.filter((k) => all[k].properties?.type?.enum).map((k) => [all[k].properties.type.enum[0], k]));
const out = { source: 'openai-openapi.json components.schemas (extract)', events, schemas: picked };
const target = path.join(root, 'src/api/responses/__fixtures__/reference-schemas.json');
fs.writeFileSync(target, JSON.stringify(out) + '\n');
console.log(`${Object.keys(events).length} event types, ${Object.keys(picked).length} schemas -> ${path.relative(root, target)} (${fs.statSync(target).size} bytes)`);
