// A start that cannot work exits 1 with one line naming what to change, and no stack:
// the port in use, a DATA_DIR (or blob directory) that cannot be made or written, PostgreSQL out of reach
// (named by host and port, never the password), invalid configuration.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { bannerSecrets, runToExit, startServerProcess, userEnv } from '../../test/helpers/server-process.ts';

// These use no database of the run, so the PostgreSQL pass (which reruns files that use
// the test helpers) runs only the test that needs its server.
const once = process.env.TEST_DATABASE === 'postgres' && 'no database of the run involved: the SQLite pass runs it';

let tmp: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-startup-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs main with `env` and checks: exit 1, one line on stderr matching `line`, nothing on stdout. */
async function failsWith(env: Record<string, string>, line: RegExp): Promise<string> {
  const out = await runToExit(userEnv({ PORT: '0', DATA_DIR: path.join(tmp, `data-${Math.random().toString(36).slice(2)}`), ...env }));
  assert.equal(out.code, 1, out.stderr);
  assert.equal(out.stdout, '');
  const lines = out.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line, no stack:\n${out.stderr}`);
  assert.match(lines[0]!, line);
  return lines[0]!;
}

const listening = (port = 0): Promise<net.Server> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

test('port in use: names PORT; no secret was created, so the next start shows the banner', { skip: once }, async () => {
  const blocker = await listening();
  const dataDir = path.join(tmp, 'port-in-use');
  try {
    await failsWith({ PORT: String(portOf(blocker)), DATA_DIR: dataDir }, new RegExp(`^agent-api: PORT ${portOf(blocker)} is already in use on 127\\.0\\.0\\.1 \\(set PORT to another port\\)$`));
  } finally {
    blocker.close();
  }
  const next = await startServerProcess(userEnv({ PORT: '0', DATA_DIR: dataDir }));
  try {
    const out = await next.waitForOutput((o) => /Admin token: /.test(o.stderr), 'the banner');
    assert.ok(bannerSecrets(out.stderr).apiKey);
  } finally {
    await next.stop();
  }
});

test('DATA_DIR that cannot be created: names the path', { skip: once }, async () => {
  const file = path.join(tmp, 'a-file');
  fs.writeFileSync(file, '');
  const dir = path.join(file, 'data');
  await failsWith({ DATA_DIR: dir }, new RegExp(`^agent-api: DATA_DIR ${dir} cannot be created: part of the path is a file \\(set DATA_DIR to a writable directory\\)$`));
});

test('a blob directory that cannot be created: names AGENT_API_BLOB_DIR', { skip: once }, async () => {
  const file = path.join(tmp, 'another-file');
  fs.writeFileSync(file, '');
  const dir = path.join(file, 'blobs');
  await failsWith({ AGENT_API_BLOB_DIR: dir }, new RegExp(`^agent-api: AGENT_API_BLOB_DIR ${dir} cannot be created: part of the path is a file \\(set AGENT_API_BLOB_DIR to a writable directory\\)$`));
});

test('DATA_DIR that is not writable: names the path', { skip: once }, async (t) => {
  // root writes through permission bits: use a directory no one may create files in (sysfs).
  let dir = '/sys';
  if (process.getuid?.() !== 0) {
    dir = path.join(tmp, 'read-only');
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o500);
  }
  try {
    fs.writeFileSync(path.join(dir, '.probe'), '');
    fs.rmSync(path.join(dir, '.probe'));
    t.skip(`${dir} is writable here`);
    return;
  } catch {}
  await failsWith({ DATA_DIR: dir }, new RegExp(`^agent-api: DATA_DIR ${dir} is not writable: [a-z ]+ \\(set DATA_DIR to a writable directory\\)$`));
});

test('PostgreSQL out of reach: names host and port, never the password', { skip: once }, async () => {
  const closed = await listening();
  const port = portOf(closed);
  await new Promise((r) => closed.close(r));
  const line = await failsWith(
    { DATABASE_URL: `postgres://agent:s3cret-pw@127.0.0.1:${port}/agent` },
    new RegExp(`^agent-api: cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}: connection refused \\(check DATABASE_URL and that the server is running\\)$`),
  );
  assert.ok(!line.includes('s3cret-pw'));
});

test('PostgreSQL without the database: names it', { skip: !process.env.TEST_PG_ADMIN_URL && 'PostgreSQL pass only' }, async () => {
  const url = new URL(process.env.TEST_PG_ADMIN_URL!);
  url.pathname = '/no_such_database';
  await failsWith({ DATABASE_URL: url.toString() }, new RegExp(`^agent-api: PostgreSQL at ${url.hostname}:${url.port} has no database "no_such_database" \\(create it, or fix DATABASE_URL\\)$`));
});

test('invalid configuration: names every variable at fault, on one line', { skip: once }, async () => {
  await failsWith({ PORT: 'eighty', LOG_LEVEL: 'loud' }, /^agent-api: invalid configuration: PORT must be a number; LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent$/);
  await failsWith({ UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1' }, /^agent-api: invalid configuration: UPSTREAM_MODEL_AGENT: required when UPSTREAM_BASE_URL is set/);
});
