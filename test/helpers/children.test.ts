// The helpers that start a server child give up only at the deadline they are given (a
// generous default: a loaded machine slows a start, it must not fail it), and when they
// give up, the child (and its process group) is gone: nothing they started outlives them.
// The server here never becomes ready: its PostgreSQL completes the handshake and then
// never answers a query.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ServerProcess } from '../fuzz/server-process.ts';
import { freePort, startChildApp } from './child-app.ts';
import { START_DEADLINE_MS } from './children.ts';
import { startServerProcess, userEnv } from './server-process.ts';

/** A PostgreSQL that lets a client connect and then never answers: a start that hangs. */
async function stalledPostgres(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    // AuthenticationOk, then ReadyForQuery: the client is connected; its queries wait forever.
    s.once('data', () => s.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49])));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `postgres://agent:secret@127.0.0.1:${port}/agent`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Pids of live processes whose environment holds `marker` (Linux /proc). */
function processesMarked(marker: string): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`AGENT_API_TEST_MARKER=${marker}`)) out.push(Number(name));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return out;
}

const skip = !fs.existsSync('/proc/self/environ') && 'needs Linux /proc';
let pg: Awaited<ReturnType<typeof stalledPostgres>>;
let dir: string;
before(async () => {
  pg = await stalledPostgres();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-children-'));
});
after(async () => {
  await pg.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the default start deadline is generous: minutes, not 15 s', () => {
  assert.ok(START_DEADLINE_MS >= 60_000, `${START_DEADLINE_MS} ms`);
});

test('startChildApp gives up at its deadline and kills the server it started', { skip }, async () => {
  const marker = randomUUID();
  await assert.rejects(
    startChildApp(await freePort(), { DATABASE_URL: pg.url, DATA_DIR: dir, AGENT_API_TEST_MARKER: marker }, { deadlineMs: 1_500 }),
    /did not start/,
  );
  assert.deepEqual(processesMarked(marker), [], 'no server left running');
});

test('startServerProcess gives up at its deadline and kills the process group it started', { skip }, async () => {
  const marker = randomUUID();
  await assert.rejects(
    startServerProcess(userEnv({ DATABASE_URL: pg.url, DATA_DIR: dir, PORT: '0', AGENT_API_TEST_MARKER: marker }), undefined, { deadlineMs: 1_500 }),
    /not seen within/,
  );
  assert.deepEqual(processesMarked(marker), [], 'no server left running');
});

test('the fuzz gate’s server process gives up at its deadline and kills the server', { skip }, async () => {
  const marker = randomUUID();
  const server = new ServerProcess({ FUZZ_DATABASE_URL: pg.url, DATA_DIR: dir, LOG_LEVEL: 'silent', AGENT_API_TEST_MARKER: marker });
  await assert.rejects(server.start({ deadlineMs: 1_500 }), /did not start/);
  assert.equal(server.running, false);
  assert.deepEqual(processesMarked(marker), [], 'no server left running');
});
