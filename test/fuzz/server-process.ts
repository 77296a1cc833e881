// The server under test as a child process that can be restarted: a hostile input that
// hangs or kills it must not end the run, and every exit is recorded. A start gets
// START_DEADLINE_MS; a child not listening by then is killed before start() says so.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { reap, START_DEADLINE_MS, track } from '../helpers/children.ts';
import { stackOf } from './stack-probe.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

export interface ChildExit {
  /** epoch ms */
  at: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** true when we killed it (a hang), false when it died by itself */
  killedByUs: boolean;
  /** the last lines it wrote to stderr */
  stderr: string;
  /** for a hang: the top of the JavaScript stack it was stuck in */
  stack?: string[];
  /** for a crash: the fatal error line it printed */
  fatal?: string;
}

export class ServerProcess {
  port = 0;
  readonly exits: ChildExit[] = [];
  private child: ChildProcess | null = null;
  private killing = false;
  private stderrTail = '';
  private inspector: string | null = null;

  constructor(private readonly env: Record<string, string>) {}

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the child and resolves once it listens (killed, and a rejection, past `deadlineMs`). */
  async start(options: { deadlineMs?: number } = {}): Promise<void> {
    // The inspector, on a loopback port, tells where a hung server is stuck (stack-probe.ts).
    const child = track(
      spawn(process.execPath, ['--inspect=127.0.0.1:0', '--import', 'tsx', path.join(here, 'child-server.ts')], {
        cwd: root,
        env: { ...process.env, ...this.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    this.child = child;
    this.killing = false;
    this.stderrTail = '';
    this.inspector = null;
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.inspector ??= /Debugger listening on (ws:\/\/\S+)/.exec(text)?.[1] ?? null;
      this.stderrTail = (this.stderrTail + text.replace(/^(Debugger (listening on|attached|ending on)|For help, see|Waiting for the debugger).*\n/gm, '')).slice(-16_000);
    });
    child.once('exit', (code, signal) => {
      const fatal = /(FATAL ERROR:[^\n]*|# Fatal error[^\n]*\n#[^\n]*)/.exec(this.stderrTail)?.[1]?.replace(/\n#\s*/g, ' ');
      // Ours only if it died of the signal we sent: a crash can beat the kill to it.
      const ours = this.killing && (signal === 'SIGKILL' || signal === 'SIGTERM' || (signal === null && code === 0));
      this.exits.push({ at: Date.now(), code, signal, killedByUs: ours, stderr: this.stderrTail, ...(fatal ? { fatal } : {}) });
      if (this.child === child) this.child = null;
    });
    const deadlineMs = options.deadlineMs ?? START_DEADLINE_MS;
    let timer: NodeJS.Timeout | undefined;
    try {
      this.port = await new Promise<number>((resolve, reject) => {
        let out = '';
        const onData = (chunk: Buffer) => {
          out += chunk.toString();
          const line = out.split('\n').find((l) => l.startsWith('{"port"'));
          if (line) {
            child.stdout!.off('data', onData);
            // Keep draining stdout so the child never blocks on a full pipe.
            child.stdout!.resume();
            resolve((JSON.parse(line) as { port: number }).port);
          }
        };
        child.stdout!.on('data', onData);
        child.once('exit', (code) => reject(new Error(`the server under test exited during start (code ${code}):\n${this.stderrTail}${out}`)));
        timer = setTimeout(() => reject(new Error(`the server under test did not start within ${deadlineMs} ms:\n${this.stderrTail}${out}`)), deadlineMs);
      });
    } catch (err) {
      // An exit we caused is not a crash of the server under test.
      this.killing = true;
      await reap(child);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** CPU seconds of the children that are gone */
  private cpuOfPast = 0;

  /** CPU seconds all children have used so far (Linux /proc; 0 elsewhere). */
  cpuSeconds(): number {
    return this.cpuOfPast + this.cpuOfCurrent();
  }

  private cpuOfCurrent(): number {
    try {
      const fields = fs.readFileSync(`/proc/${this.child?.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      // utime and stime, in clock ticks of 1/100 s
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  }

  /** Kills a hung child outright (after asking where it is stuck) and starts a new one on the same database. */
  async restart(): Promise<void> {
    const stack = this.child ? await this.stuckAt() : null;
    this.cpuOfPast += this.cpuOfCurrent();
    await this.kill('SIGKILL');
    const last = this.exits.at(-1);
    if (last && stack) last.stack = stack;
    await this.start();
  }

  /** The JavaScript stack of a running child, through its inspector (null without one). */
  private async stuckAt(): Promise<string[] | null> {
    return this.inspector ? stackOf(this.inspector) : null;
  }

  /** A clean stop: SIGTERM lets the service flush its activity log and close storage. Returns the exit code. */
  async stop(): Promise<number | null> {
    const child = this.child;
    if (!child) return null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // An exit we asked for is not a crash.
    this.killing = true;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }

  private async kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.killing = true;
    child.kill(signal);
    await exited;
  }
}
