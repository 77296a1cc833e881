#!/usr/bin/env node
// Writes the committed extracts of the reference OpenAPI that the tests read (a clean clone
// has no ../shared/reference): src/contract/__fixtures__/reference-coverage.json and
// src/api/responses/__fixtures__/reference-schemas.json (src/contract/reference-extract.test-support.ts).
//   npm run extract:reference -- [path/to/openai-openapi.json]
// (default: REFERENCE_OPENAPI, else ../shared/reference/openai-openapi.json beside the checkout)
import fs from 'node:fs';
import path from 'node:path';
import {
  COVERAGE_FIXTURE,
  coverageExtract,
  fixtureText,
  referencePath,
  REPO_ROOT,
  SCHEMAS_FIXTURE,
  schemasExtract,
} from '../src/contract/reference-extract.test-support.ts';

const source = process.argv[2] ?? referencePath();
if (!source || !fs.existsSync(source)) {
  console.error(`the reference OpenAPI was not found (${source ?? '../shared/reference/openai-openapi.json'}): pass its path`);
  process.exit(2);
}
const text = fs.readFileSync(source, 'utf8');
for (const [target, value] of [
  [COVERAGE_FIXTURE, coverageExtract(text)],
  [SCHEMAS_FIXTURE, schemasExtract(text)],
] as const) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, fixtureText(value));
  console.log(`${path.relative(REPO_ROOT, target)} (${fs.statSync(target).size} bytes)`);
}
