// What the sandbox says about itself before anything runs: bubblewrap missing (named, with
// what to install), no usable root (chooseSandboxRoot's problem, as given), and a failed
// probe tried again later, so installing bubblewrap needs no restart.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { BwrapSandbox } from './bwrap-sandbox.ts';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bwrap-status-'));
fs.chmodSync(scratch, 0o711);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));
const bwrapPath = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();

test('bubblewrap missing: unavailable, naming it and the package to install', async () => {
  const bwrap = path.join(scratch, 'no-such-bwrap');
  const sandbox = new BwrapSandbox({ root: path.join(scratch, 'a'), timeoutMs: 5_000, bwrap });
  assert.deepEqual(await sandbox.status(), {
    available: false,
    reason: `bubblewrap (${bwrap}) is not installed: install the bubblewrap package (Debian/Ubuntu: apt-get install bubblewrap)`,
  });
});

test('no usable root: unavailable with the reason the root choice gave, nothing probed', async () => {
  const sandbox = new BwrapSandbox({ root: path.join(scratch, 'b'), timeoutMs: 5_000, rootProblem: 'AGENT_API_SANDBOX_DIR /x is not reachable' });
  assert.deepEqual(await sandbox.status(), { available: false, reason: 'AGENT_API_SANDBOX_DIR /x is not reachable' });
  assert.equal(fs.existsSync(path.join(scratch, 'b')), false);
});

test('a failed probe is tried again: bubblewrap installed meanwhile makes it available, with its root', { skip: bwrapPath ? false : 'needs bubblewrap' }, async () => {
  const bwrap = path.join(scratch, 'bwrap-later');
  const root = path.join(scratch, 'c');
  const sandbox = new BwrapSandbox({ root, rootNote: 'moved here', timeoutMs: 20_000, bwrap, reprobeMs: 0 });
  assert.equal((await sandbox.status()).available, false);
  fs.symlinkSync(bwrapPath, bwrap);
  assert.deepEqual(await sandbox.status(), { available: true, root, note: 'moved here' });
  const cached = new BwrapSandbox({ root, timeoutMs: 20_000, bwrap: path.join(scratch, 'bwrap-never') });
  assert.equal((await cached.status()).available, false);
  fs.symlinkSync(bwrapPath, path.join(scratch, 'bwrap-never'));
  assert.equal((await cached.status()).available, false, 'within the period, the failure stands (no probe per request)');
});
