// UPSTREAM_API_KEY without UPSTREAM_BASE_URL stops start-up with one line naming both
// (it used to be ignored: the offline engine answered and nobody noticed), never the key.
// A file of its own: each start costs seconds on a loaded machine, and startup-errors.test.ts has many.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runToExit, userEnv } from '../../test/helpers/server-process.ts';

// No database of the run is involved: the SQLite pass runs it.
const once = process.env.TEST_DATABASE === 'postgres' && 'no database of the run involved: the SQLite pass runs it';

test('UPSTREAM_API_KEY without UPSTREAM_BASE_URL: exit 1, one line naming both, not the key', { skip: once }, async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-startup-'));
  try {
    const out = await runToExit(userEnv({ PORT: '0', DATA_DIR: path.join(tmp, 'data'), UPSTREAM_API_KEY: 'sk-never-echoed' }));
    assert.equal(out.code, 1, out.stderr);
    assert.equal(out.stdout, '');
    const lines = out.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line, no stack:\n${out.stderr}`);
    assert.match(lines[0]!, /^agent-api: invalid configuration: UPSTREAM_API_KEY: set without UPSTREAM_BASE_URL \(set UPSTREAM_BASE_URL to use the upstream, or unset UPSTREAM_API_KEY\)$/);
    assert.ok(!out.stderr.includes('sk-never-echoed'));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
