// The server as a real child process on a port, for tests that stop it the hard way
// (SIGTERM, `kill -9`) and start another on the same database: the restart tests of
// batches, background responses and credit holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const root = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as net.AddressInfo;
  srv.close();
  return port;
}

/** `node --import tsx src/main.ts` on `port` with `env` over this process's; resolves once /healthz answers. */
export async function startChildApp(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: 'ignore',
  });
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return child;
    await delay(50);
  }
  throw new Error('the server did not start');
}
