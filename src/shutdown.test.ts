// Graceful shutdown: in-flight requests finish, the activity log is flushed, and the
// process started as `npm start` does exits 0 on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createApp } from './app.ts';
import { createChatCompletion } from './contract/endpoints/chat.ts';
import { track } from '../test/helpers/children.ts';
import { startTestServer } from '../test/helpers/test-server.ts';

const slow = { ...createChatCompletion, operationId: 'testSlowShutdown', path: '/test/slow', billable: false } as const;

test('close() lets an in-flight request finish and records it', async () => {
  let release!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  const server = await startTestServer({}, {
    routes: (r) =>
      r.endpoint(slow, () => {
        markStarted();
        return new Promise((resolve) => (release = () => resolve({ ok: true })));
      }),
  });
  try {
    const { key, id } = await server.createKey();
    const inflight = server.fetch('/v1/test/slow', {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'agent', messages: [{ role: 'user', content: 'x' }] }),
    });
    await started;
    const closing = server.app.close();
    setTimeout(() => release(), 100);
    const res = await inflight;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true });
    await closing;
    // The row was flushed before the database closed: reopen and look.
    const reopened = await createApp(server.config);
    const rows = await reopened.services.store.db.selectFrom('activity').selectAll().where('key_id', '=', id).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.status, 200);
    await reopened.close();
  } finally {
    await server.close();
  }
});

test('the server process exits 0 on SIGTERM', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-main-'));
  // Tracked: killed when this test process exits, should the test time out before its finally.
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', path.resolve(import.meta.dirname, 'main.ts')], {
      env: { ...process.env, DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  try {
    const address = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const m = /"address":"(http:[^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
    });
    assert.equal((await fetch(`${address}/healthz`)).status, 200);
    assert.ok(fs.existsSync(path.join(dir, 'agent-api.sqlite')), 'SQLite under DATA_DIR by default');
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
