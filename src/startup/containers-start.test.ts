// Containers out of the box, as a user starts the service (`npm start`'s command line):
// with the data directory under a 0700 directory (a checkout under /root), code_interpreter
// runs, in a root the service made elsewhere, the summary line says where and why, and the
// 0700 directory is left as it was; without bubblewrap, the summary line says containers
// are off and what to install, /readyz says so while the service stays ready, and the
// container routes answer 503 saying why.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startServerProcess, userEnv } from '../../test/helpers/server-process.ts';
import { scratchDatabase, unmountUnder } from '../../test/helpers/test-server.ts';

const KEY = 'sk-agent-containers-start-test-key';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0;
const skipRoot = process.getuid?.() !== 0 ? 'needs root (programs run as other uids only then)' : !hasBwrap ? 'needs bubblewrap' : false;

/** The database of this pass: SQLite in DATA_DIR, or a fresh PostgreSQL database. */
async function database() {
  const scratch = await scratchDatabase();
  return { scratch, env: process.env.TEST_DATABASE === 'postgres' ? { DATABASE_URL: scratch.url } : {} };
}

async function call(origin: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${origin}${url}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

test('a data directory under a 0700 directory: code_interpreter runs out of the box, the 0700 directory unchanged', { skip: skipRoot }, async () => {
  const { scratch, env } = await database();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'x-0700-'));
  fs.chmodSync(home, 0o700);
  const dataDir = path.join(home, 'data');
  const server = await startServerProcess(userEnv({ PORT: '0', DATA_DIR: dataDir, AGENT_API_BOOTSTRAP_KEY: KEY, ...env }));
  let root: string | undefined;
  try {
    const configured = path.join(dataDir, 'containers');
    const said = new RegExp(`^on \\(root (/var/lib/agent-api/sandbox-[0-9a-f]{16}): ${configured} is not reachable by the sandbox's unprivileged users \\(${home} is mode 0700\\)`);
    const m = said.exec(server.summary.containers ?? '');
    assert.ok(m, `the summary line says where containers live and why: ${server.summary.containers}`);
    root = m[1]!;
    assert.match(server.output().stdout, new RegExp(`\\| containers: on \\(root ${root}: `), 'in the line itself too');

    const r = await call(server.origin, 'POST', '/v1/responses', {
      model: 'agent',
      input: 'Run this:\n```python\nprint(6*7)\n```',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
      include: ['code_interpreter_call.outputs'],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const run = r.body.output.find((i: any) => i.type === 'code_interpreter_call');
    assert.equal(run?.status, 'completed', JSON.stringify(r.body.output));
    assert.equal(run.outputs.map((o: any) => o.logs).join(''), '42\n');
    assert.ok(fs.statSync(path.join(root, run.container_id)).isDirectory(), 'the container lives under the root the summary named');

    const ready = await fetch(`${server.origin}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(((await ready.json()) as any).containers, { ok: true });

    assert.equal((await call(server.origin, 'DELETE', `/v1/containers/${run.container_id}`)).status, 200);
    assert.equal(fs.statSync(home).mode & 0o7777, 0o700, "the user's directory is as closed as it was");
    assert.equal(fs.existsSync(configured), false, 'nothing made where it cannot be used');
    assert.equal(await server.stop(), 0);
    assert.equal(fs.existsSync(root), false, 'a root it made, left empty, goes at shutdown');
  } finally {
    await server.stop();
    if (root) {
      unmountUnder(root);
      fs.rmSync(root, { recursive: true, force: true });
      // The base too, when no other root is left in it.
      try {
        fs.rmdirSync(path.dirname(root));
      } catch {
        // Not empty: another service's root is there.
      }
    }
    fs.rmSync(home, { recursive: true, force: true });
    await scratch.cleanup();
  }
});

test('without bubblewrap: the summary line says containers are off and what to install; /readyz says so; the routes answer 503', async () => {
  const { scratch, env } = await database();
  // A PATH holding everything the sandbox uses but bwrap.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'no-bwrap-path-'));
  for (const tool of ['prlimit', 'setpriv', 'mount', 'umount']) {
    const found = (process.env.PATH ?? '').split(':').map((d) => path.join(d, tool)).find((p) => fs.existsSync(p));
    if (found) fs.symlinkSync(found, path.join(bin, tool));
  }
  const server = await startServerProcess({ ...userEnv({ PORT: '0', DATA_DIR: scratch.dir, AGENT_API_BOOTSTRAP_KEY: KEY, ...env }), PATH: bin });
  try {
    assert.match(server.summary.containers ?? '', /^off \(bubblewrap \(bwrap\) is not installed: install the bubblewrap package \(Debian\/Ubuntu: apt-get install bubblewrap\)\)$/);

    const ready = await fetch(`${server.origin}/readyz`);
    assert.equal(ready.status, 200, 'the rest of the service is ready');
    const body = (await ready.json()) as any;
    assert.equal(body.status, 'ready');
    assert.equal(body.containers.ok, false);
    assert.match(body.containers.error, /^bubblewrap \(bwrap\) is not installed/);

    const made = await call(server.origin, 'POST', '/v1/containers', { name: 'x' });
    assert.equal(made.status, 503);
    assert.match(made.body.error.message, /^Code execution is not available on this server: bubblewrap \(bwrap\) is not installed: install the bubblewrap package/);
    const r = await call(server.origin, 'POST', '/v1/responses', {
      model: 'agent',
      input: 'Run this:\n```python\nprint(6*7)\n```',
      tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    });
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.match(r.body.error.message, /bubblewrap/);
  } finally {
    await server.stop();
    fs.rmSync(bin, { recursive: true, force: true });
    await scratch.cleanup();
  }
});
