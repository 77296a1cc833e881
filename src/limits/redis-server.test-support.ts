// A redis-server of a test's own on a free port, which the test may kill and start
// again on the same port (the shared one of `npm test`, TEST_REDIS_URL, must stay up).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The redis-server binary, or null when none is installed. */
export function redisServerBinary(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
  for (const dir of dirs) {
    const file = path.join(dir, 'redis-server');
    if (dir && fs.existsSync(file)) return file;
  }
  return null;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
    s.once('error', () => resolve(false));
  });

export class OwnRedis {
  private child: ChildProcess | null = null;

  private constructor(
    private readonly binary: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(binary: string): Promise<OwnRedis> {
    const redis = new OwnRedis(binary, fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-own-redis-')), await freePort());
    await redis.restart();
    return redis;
  }

  /** Starts it (again) on its port; resolves once it accepts connections. */
  async restart(): Promise<void> {
    const child = spawn(this.binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], { stdio: 'ignore' });
    this.child = child;
    for (let i = 0; i < 400; i++) {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      if (await accepts(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  }

  /** Kills it without warning (SIGKILL) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  async stop(): Promise<void> {
    await this.kill();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
