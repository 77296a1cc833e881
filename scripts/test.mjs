#!/usr/bin/env node
// `npm test`: type-checks, then runs the whole suite on SQLite and again, for every
// test that touches storage, on PostgreSQL. With no DATABASE_URL it starts a
// throwaway PostgreSQL cluster (initdb, trust auth, free port, temp dir, fsync off)
// and a throwaway redis-server, and stops both afterwards.
//
//   npm test                       everything
//   npm test -- src/api/models     only test files under these paths
//   TEST_SKIP_POSTGRES=1 npm test  SQLite only (a quick local loop)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const filters = process.argv.slice(2).map((f) => path.resolve(f));
const cleanups = [];

function findTests(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.')) out.push(...findTests(p));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function which(cmd, extraDirs = []) {
  for (const dir of [...extraDirs, ...(process.env.PATH ?? '').split(':')]) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

function postgresBinDir() {
  const pgConfig = which('pg_config');
  if (pgConfig) {
    const dir = execFileSync(pgConfig, ['--bindir'], { encoding: 'utf8' }).trim();
    if (fs.existsSync(path.join(dir, 'initdb'))) return dir;
  }
  const base = '/usr/lib/postgresql';
  if (fs.existsSync(base)) {
    const versions = fs.readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (fs.existsSync(path.join(base, v, 'bin', 'initdb'))) return path.join(base, v, 'bin');
  }
  return which('initdb') ? path.dirname(which('initdb')) : null;
}

async function startPostgres() {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL binaries (initdb, pg_ctl) not found: install the postgresql package or set DATABASE_URL.');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-pg-'));
  const asRoot = process.getuid?.() === 0;
  // initdb and postgres refuse to run as root: run them as the postgres user.
  const run = (cmd, args) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
    const r = spawnSync(file, argv, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  if (asRoot) {
    fs.chmodSync(dir, 0o755);
    execFileSync('chown', ['postgres', dir]);
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
  run(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', opts, 'start']);
  cleanups.push(() => {
    try {
      run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']);
    } catch {}
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return `postgres://postgres@127.0.0.1:${port}/postgres`;
}

async function startRedis() {
  const server = which('redis-server', ['/usr/bin', '/usr/sbin']);
  if (!server) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-redis-'));
  const port = await freePort();
  const child = spawn(server, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  cleanups.push(() => {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // Wait until it accepts connections.
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return `redis://127.0.0.1:${port}`;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start');
}

/** Runs node's test runner on `files`, echoing its output; returns the pass/fail counts. */
function runTests(label, files, env) {
  return new Promise((resolve) => {
    console.log(`\n=== ${label}: ${files.length} test files ===`);
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', '--test-timeout=300000', ...files], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString()).slice(-4000);
    });
    child.on('close', (code) => {
      const count = (name) => Number(new RegExp(`ℹ ${name} (\\d+)`).exec(tail)?.[1] ?? 0);
      resolve({ passed: count('pass'), failed: count('fail') + (code !== 0 && count('fail') === 0 ? 1 : 0) });
    });
  });
}

async function main() {
  let files = [...findTests(path.join(root, 'src')), ...(fs.existsSync(path.join(root, 'test')) ? findTests(path.join(root, 'test')) : [])];
  if (filters.length) files = files.filter((f) => filters.some((p) => f.startsWith(p)));
  files.sort();

  console.log('=== typecheck ===');
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', root], { stdio: 'inherit' });
  if (tsc.status !== 0) {
    console.log('0 passed, 1 failed');
    process.exit(1);
  }

  const redisUrl = process.env.REDIS_URL ?? (await startRedis());
  if (!redisUrl) console.warn('warning: redis-server not found; tests that need Redis are skipped');
  const common = { ...(redisUrl ? { TEST_REDIS_URL: redisUrl } : {}), NODE_ENV: 'test' };

  const results = [await runTests('SQLite', files, { ...common, TEST_DATABASE: 'sqlite' })];
  if (!process.env.TEST_SKIP_POSTGRES) {
    const storageTests = files.filter((f) => /test\/helpers|test-server/.test(fs.readFileSync(f, 'utf8')));
    if (storageTests.length) {
      const adminUrl = process.env.DATABASE_URL ?? (await startPostgres());
      results.push(await runTests('PostgreSQL', storageTests, { ...common, TEST_DATABASE: 'postgres', TEST_PG_ADMIN_URL: adminUrl }));
    }
  }
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`\n${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  console.error(err);
  console.log('0 passed, 1 failed');
} finally {
  for (const c of cleanups.reverse()) c();
}
process.exit(exitCode);
