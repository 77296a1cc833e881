// Choosing the sandbox root: the configured one when the sandbox's uids can reach it, else
// one the service makes under a reachable base (0711, its own), never by opening the
// user's directories. Run with an owner-only umask, as the service may be: what it makes
// must still be searchable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { chooseSandboxRoot, closedOnTheWay, fallbackCandidates, type RootCandidate } from './sandbox-root.ts';

process.umask(0o077);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-root-'));
fs.chmodSync(scratch, 0o711);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;
let n = 0;

/** A fresh directory under the scratch one, of `mode`. */
function dir(mode: number): string {
  const d = path.join(scratch, `d${n++}`);
  fs.mkdirSync(d);
  fs.chmodSync(d, mode);
  return d;
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o7777;

/** A place like /var/lib/agent-api/sandbox-<hash>, under a fresh base of its own. */
function varLib(): RootCandidate {
  const base = dir(0o755);
  return { dir: path.join(base, 'agent-api', 'sandbox-x'), ownFrom: path.join(base, 'agent-api') };
}

test('a configured root under a 0700 directory moves to a place the service makes; the 0700 directory stays as it was', async () => {
  const home = dir(0o700);
  const dataDir = path.join(home, 'data');
  fs.mkdirSync(dataDir);
  fs.chmodSync(dataDir, 0o755);
  const configured = path.join(dataDir, 'containers');
  const place = varLib();
  const chosen = await chooseSandboxRoot({ configured, explicit: false, otherUsers: true, fallbacks: [place] });
  assert.equal(chosen.problem, undefined);
  assert.equal(chosen.root, place.dir);
  assert.match(chosen.note ?? '', new RegExp(`^${configured} is not reachable by the sandbox's unprivileged users \\(${home} is mode 0700\\)`));
  assert.equal(modeOf(place.ownFrom), 0o711, 'made searchable, not listable, whatever the umask');
  assert.equal(modeOf(place.dir), 0o711);
  assert.equal(await closedOnTheWay(place.dir), undefined, 'the uids reach it');
  assert.equal(modeOf(home), 0o700, "the user's directory is not opened");
  assert.equal(modeOf(dataDir), 0o755);
  assert.equal(fs.existsSync(configured), false, 'nothing made where it is not used');
  // The next start finds the same place and uses it as it is.
  assert.deepEqual(await chooseSandboxRoot({ configured, explicit: false, otherUsers: true, fallbacks: [place] }), chosen);
});

test('a reachable configured root is used, made 0711 whatever the umask', async () => {
  const configured = path.join(dir(0o755), 'data', 'containers');
  const chosen = await chooseSandboxRoot({ configured, explicit: true, otherUsers: true, fallbacks: [] });
  assert.deepEqual(chosen, { root: configured });
  assert.equal(modeOf(configured), 0o711);
  assert.equal(modeOf(path.dirname(configured)), 0o711, 'a missing parent is made the same way');
});

test('a root that cannot be made turns containers off, saying so, instead of stopping the start', async () => {
  const file = path.join(dir(0o755), 'a-file');
  fs.writeFileSync(file, '');
  const chosen = await chooseSandboxRoot({ configured: path.join(file, 'containers'), explicit: true, otherUsers: false });
  assert.match(chosen.problem ?? '', /^AGENT_API_SANDBOX_DIR .*a-file\/containers cannot be made: ENOTDIR \(set AGENT_API_SANDBOX_DIR to a writable directory\)$/);
});

test('programs that run as the service itself (not root) need nothing reachable', async () => {
  const configured = path.join(dir(0o700), 'containers');
  assert.deepEqual(await chooseSandboxRoot({ configured, explicit: false, otherUsers: false, fallbacks: [] }), { root: configured });
});

test('an explicit AGENT_API_SANDBOX_DIR is never moved: containers are off, saying what to change', async () => {
  const home = dir(0o700);
  const configured = path.join(home, 'sandbox');
  const place = varLib();
  const chosen = await chooseSandboxRoot({ configured, explicit: true, otherUsers: true, fallbacks: [place] });
  assert.equal(chosen.root, configured);
  assert.match(chosen.problem ?? '', new RegExp(`^AGENT_API_SANDBOX_DIR ${configured} is not reachable .*${home} is mode 0700.*o\\+x, or unset AGENT_API_SANDBOX_DIR`));
  assert.equal(fs.existsSync(place.ownFrom), false);
  assert.equal(modeOf(home), 0o700);
});

test("a place someone else prepared (a link, a writable or closed directory, another owner's) is passed over", async () => {
  const configured = path.join(dir(0o700), 'containers');
  const target = dir(0o711);
  const link = path.join(dir(0o755), 'agent-api-sandbox');
  fs.symlinkSync(target, link);
  const writable = path.join(dir(0o755), 'agent-api-sandbox');
  fs.mkdirSync(writable);
  fs.chmodSync(writable, 0o777);
  const closed = path.join(dir(0o755), 'agent-api-sandbox');
  fs.mkdirSync(closed);
  fs.chmodSync(closed, 0o700);
  const squatted = [link, writable, closed].map((d) => ({ dir: d, ownFrom: d }));
  if (asRoot) {
    const theirs = path.join(dir(0o755), 'agent-api-sandbox');
    fs.mkdirSync(theirs);
    fs.chmodSync(theirs, 0o711);
    fs.chownSync(theirs, 4242, 4242);
    squatted.push({ dir: theirs, ownFrom: theirs });
  }
  const good = path.join(dir(0o755), 'agent-api-sandbox');
  const chosen = await chooseSandboxRoot({ configured, explicit: false, otherUsers: true, fallbacks: [...squatted, { dir: good, ownFrom: good }] });
  assert.equal(chosen.root, good);
  assert.equal(fs.readdirSync(target).length, 0, 'nothing made through the link');

  const none = await chooseSandboxRoot({ configured, explicit: false, otherUsers: true, fallbacks: squatted });
  assert.equal(none.root, configured);
  assert.match(none.problem ?? '', /and no other place could be made/);
  for (const d of squatted) assert.match(none.problem ?? '', new RegExp(`${d.dir} exists but is not a directory of the service's own`));
  assert.match(none.problem ?? '', /set AGENT_API_SANDBOX_DIR/);
  assert.equal(modeOf(writable), 0o777, 'left as it was');
});

test('a base whose parents are closed, or missing, is passed over', async () => {
  const configured = path.join(dir(0o700), 'containers');
  const closedBase = path.join(dir(0o700), 'lib', 'agent-api');
  fs.mkdirSync(path.dirname(closedBase));
  fs.chmodSync(path.dirname(closedBase), 0o755);
  const missing = path.join(scratch, 'no-such-dir', 'agent-api');
  const chosen = await chooseSandboxRoot({
    configured,
    explicit: false,
    otherUsers: true,
    fallbacks: [
      { dir: path.join(missing, 's'), ownFrom: missing },
      { dir: path.join(closedBase, 's'), ownFrom: closedBase },
    ],
  });
  assert.match(chosen.problem ?? '', new RegExp(`${path.dirname(missing)} does not exist; .* is mode 0700`));
  assert.equal(fs.existsSync(missing), false);
});

test('the default places: /var/lib/agent-api as root, then the temp directory, named after the configured root', () => {
  const [varLibPlace, tmp] = fallbackCandidates('/root/app/data/containers', 0);
  assert.match(varLibPlace!.dir, /^\/var\/lib\/agent-api\/sandbox-[0-9a-f]{16}$/);
  assert.equal(varLibPlace!.ownFrom, '/var/lib/agent-api');
  assert.equal(tmp!.dir, path.join(os.tmpdir(), `agent-api-sandbox-0-${varLibPlace!.dir.slice(-16)}`));
  assert.deepEqual(fallbackCandidates('/root/app/data/containers', 0), [varLibPlace, tmp], 'the same at every start');
  assert.notEqual(fallbackCandidates('/root/other/data/containers', 0)[0]!.dir, varLibPlace!.dir, 'another data dir, another place');
  assert.deepEqual(
    fallbackCandidates('/home/u/data/containers', 1000).map((c) => path.dirname(c.dir)),
    [os.tmpdir()],
    'not root: only the temp directory',
  );
});
