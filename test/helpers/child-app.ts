// The server as a real child process on a port, for tests that stop it the hard way
// (SIGTERM, `kill -9`) and start another on the same database: the restart tests of
// batches, background responses and credit holds. A start gets START_DEADLINE_MS; a
// child that is not ready by then is killed before the helper says so.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { reap, START_DEADLINE_MS, track } from './children.ts';

const root = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as net.AddressInfo;
  srv.close();
  return port;
}

/**
 * `node --import tsx src/main.ts` on `port` with `env` over this process's; resolves once
 * /healthz answers. Not ready within `deadlineMs`: the child is killed, then this throws.
 */
export async function startChildApp(port: number, env: Record<string, string>, options: { deadlineMs?: number } = {}): Promise<ChildProcess> {
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
      cwd: root,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', ...env },
      stdio: 'ignore',
    }),
  );
  const deadlineMs = options.deadlineMs ?? START_DEADLINE_MS;
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    const probe = AbortSignal.timeout(Math.max(1, Math.min(5_000, until - Date.now())));
    if (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: probe }).then((r) => r.ok, () => false)) return child;
    await delay(50);
  }
  await reap(child);
  throw new Error(`the server did not start within ${deadlineMs} ms`);
}

/** The admin API of a child server at `origin`, with `token`: the parsed JSON answer. */
export const adminAt =
  (origin: string, token: string) =>
  async (method: string, url: string, body?: unknown): Promise<Record<string, any>> => {
    const res = await fetch(`${origin}/admin/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return res.json() as Promise<Record<string, any>>;
  };
