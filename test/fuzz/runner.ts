// Sends the cases with a few in flight and judges each answer. Survives a server that
// hangs (/healthz silent for stallMs: kill and restart it) or exits (restart it). The
// requests in flight then are not judged one by one: the incident is the failure. Its
// suspects are replayed alone until one hangs or kills the server again (the culprit),
// and further cases of the culprit's operation and category are skipped, so one defect
// cannot eat the run's time.
import type { Case } from './case.ts';
import { judge, type Outcome } from './checks.ts';
import { sendRaw, type RawRequest } from './raw-http.ts';
import type { ServerProcess } from './server-process.ts';
import { judgeWs, Lanes, runOnLane, WS_READ_LIMIT_FACTOR, wsCase, wsMessage } from './websocket.ts';

export interface Sent {
  index: number;
  c: Case;
  outcome: Outcome;
  /** epoch ms, to match /healthz samples with the requests in flight */
  start: number;
  end: number;
  /** bytes of the request as sent */
  size: number;
  /** in flight when the server hung or exited: not judged on its own */
  disturbed: boolean;
  /** the case's body sent again as a message on the Responses WebSocket (after its POST) */
  websocket?: true;
}

export interface Incident {
  kind: 'hang' | 'exit';
  at: number;
  /** the cases in flight, earliest first, then those answered just before */
  suspects: Case[];
  /** the suspect that hung or killed the server again when replayed alone */
  culprit: Case | null;
  /** where the hung server was stuck (top of its JavaScript stack) */
  stack: string[] | null;
  detail: string;
}

export interface RunnerOptions {
  concurrency: number;
  /** a request unanswered this long, while /healthz answers, is a timeout */
  timeoutMs: number;
  /** /healthz silent this long is a hung server */
  stallMs: number;
  /** epoch ms of the last good /healthz answer */
  lastHealthy: () => number;
  onPause: () => void;
  onRestart: (port: number) => void;
  /**
   * Called after each case (the prototype probe); true asks for a fresh server, so a
   * polluted Object.prototype does not change how every later request is answered.
   */
  after?: (c: Case, done: number) => Promise<boolean>;
  /** epoch ms after which no new case is sent */
  deadline: number;
  /** what a hang puts aside: the culprit's operation and category (default), or only the very case */
  quarantine: 'category' | 'case';
  /** POST /v1/responses body cases are sent again over the Responses WebSocket with this key */
  websocket?: { secret: string; bodyLimit: number };
}

const now = () => performance.timeOrigin + performance.now();
/** A replayed message has no POST answer to be compared with: only the invariants apply. */
const NO_POST: Outcome = { label: '', status: null, requestId: null, param: undefined, code: undefined, shape: 'reference', preview: '', parserClose: false, violations: [], ids: [] };

export class Runner {
  readonly sent: Sent[] = [];
  readonly incidents: Incident[] = [];
  /** operation + category pairs skipped after they hung or killed the server */
  readonly quarantined = new Map<string, number>();
  private readonly inFlight = new Map<number, { c: Case; start: number }>();
  private epoch = 0;
  private recovering: Promise<void> | null = null;
  /** cases not sent because the deadline passed */
  unsent = 0;
  /** epoch ms windows from a stall's start to the end of its recovery */
  readonly troubled: [number, number][] = [];
  /** answers to suspects replayed alone (their charges and rows are accounted like any other) */
  readonly replayed: { c: Case; outcome: Outcome; websocket?: true }[] = [];
  private readonly lanes: Lanes | null;

  constructor(
    private readonly server: ServerProcess,
    private readonly opts: RunnerOptions,
  ) {
    this.lanes = opts.websocket ? new Lanes(opts.websocket.secret) : null;
  }

  private pairOf(c: Case): string {
    return this.opts.quarantine === 'case' ? `${c.op.id} ${c.category}: ${c.note}` : `${c.op.id} ${c.category}`;
  }

  async run(cases: readonly Case[]): Promise<void> {
    let next = 0;
    let checking = false;
    const watchdog = setInterval(() => {
      if (this.recovering || checking) return;
      if (!this.server.running) void this.recover('exit', `the server exited: ${JSON.stringify(this.server.exits.at(-1) ?? {})}`);
      else if (now() - this.opts.lastHealthy() > this.opts.stallMs) {
        // The poller's silence could be this process's own stall: ask once more, directly.
        checking = true;
        void this.healthy().then((ok) => {
          checking = false;
          if (!ok && !this.recovering) void this.recover('hang', `/healthz silent for ${this.opts.stallMs} ms`);
        });
      }
    }, 250);
    const worker = async () => {
      while (next < cases.length) {
        const index = next++;
        const c = cases[index]!;
        if (now() > this.opts.deadline) {
          this.unsent++;
          continue;
        }
        if (this.quarantined.has(this.pairOf(c))) {
          this.quarantined.set(this.pairOf(c), this.quarantined.get(this.pairOf(c))! + 1);
          continue;
        }
        await this.one(index, c);
        if (this.opts.after && (await this.opts.after(c, this.sent.length))) await this.reset();
      }
    };
    try {
      await Promise.all(Array.from({ length: this.opts.concurrency }, worker));
    } finally {
      clearInterval(watchdog);
      // A hang noticed by the last requests is still being dealt with.
      while (this.recovering) await this.recovering;
      this.lanes?.closeAll();
    }
  }

  private async one(index: number, c: Case): Promise<void> {
    while (this.recovering) await this.recovering;
    const epoch = this.epoch;
    let req: RawRequest;
    try {
      req = c.build();
    } catch (err) {
      throw new Error(`building case ${index} (${c.category} ${c.op.id}: ${c.note}) failed: ${String(err)}`);
    }
    const start = now();
    this.inFlight.set(index, { c, start });
    const result = await sendRaw(this.server.port, req, this.opts.timeoutMs);
    this.inFlight.delete(index);
    const outcome = judge(c, result, req.method, req.target);
    // Caught in a hang or exit: the incident speaks for it. (A server that died refuses
    // connections before the watchdog notices.)
    const died = !this.server.running || this.server.exits.some((e) => e.at >= start - 1_000);
    const disturbed = (this.epoch !== epoch || died) && result.kind !== 'response';
    this.sent.push({ index, c, outcome, start, end: now(), size: (req.body?.length ?? 0) + req.target.length, disturbed });
    // (Not after the deadline: the report must come out in time.)
    const message = this.lanes && now() < this.opts.deadline ? wsMessage(c, req) : null;
    if (message && !disturbed) await this.oneOverWebSocket(index, c, message, req.body!, outcome);
  }

  /** The case's body as a response.create message, judged against what its POST got. */
  private async oneOverWebSocket(index: number, c: Case, message: Buffer, body: Buffer, post: Outcome): Promise<void> {
    while (this.recovering) await this.recovering;
    const epoch = this.epoch;
    const start = now();
    const limit = this.opts.websocket!.bodyLimit;
    const run = await runOnLane(this.lanes!, this.server.port, message, limit * WS_READ_LIMIT_FACTOR, this.opts.timeoutMs);
    const outcome = judgeWs(run, post, message, body, limit);
    const died = !this.server.running || this.server.exits.some((e) => e.at >= start - 1_000);
    const disturbed = (this.epoch !== epoch || died) && run.result.kind !== 'answer';
    this.sent.push({ index, c: wsCase(c, message), outcome, start, end: now(), size: message.length, disturbed, websocket: true });
  }

  /** Asked twice, so a pause of this process (not the server's) is not taken for a hang. */
  private async healthy(): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await sendRaw(this.server.port, { method: 'GET', target: '/healthz', headers: [], body: null }, 1_500);
      if (r.kind === 'response' && r.response.status === 200) return true;
    }
    return false;
  }

  /** One restart, however many notice the trouble; then the suspects are isolated. */
  private recover(kind: Incident['kind'], detail: string): Promise<void> {
    this.recovering ??= (async () => {
      const from = this.opts.lastHealthy();
      // In flight, earliest first; then those answered just before the stall, which may
      // have left work running after their answer (latest first).
      const recent = this.sent.filter((s) => s.end >= from - 1_000 && !s.websocket).sort((a, b) => b.end - a.end).map((s) => s.c);
      const suspects = [...[...this.inFlight.values()].sort((a, b) => a.start - b.start).map((f) => f.c), ...recent].slice(0, 12);
      const incident: Incident = { kind, at: now(), suspects, culprit: null, stack: null, detail };
      this.incidents.push(incident);
      await this.restart();
      const exit = this.server.exits.at(-1);
      incident.stack = exit?.stack ?? null;
      // A server that died while we were making sure it hung: an exit after all.
      if (exit && !exit.killedByUs) {
        incident.kind = 'exit';
        incident.detail = `signal ${exit.signal}, code ${exit.code}${exit.fatal ? `: ${exit.fatal}` : ''}`;
      }
      for (const c of suspects) {
        if (await this.replayHangs(c)) {
          incident.culprit = c;
          this.quarantined.set(this.pairOf(c), 0);
          break;
        }
      }
      this.troubled.push([from, now()]);
    })().finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }

  /** A fresh server (same database), outside any incident. */
  private reset(): Promise<void> {
    this.recovering ??= (async () => {
      const from = now();
      await this.restart();
      this.troubled.push([from, now()]);
    })().finally(() => {
      this.recovering = null;
    });
    return this.recovering;
  }

  private async restart(): Promise<void> {
    this.epoch++;
    this.opts.onPause();
    await this.server.restart();
    this.opts.onRestart(this.server.port);
  }

  /** Sends one case alone; true (and a restarted server) when it hangs or kills the server again. */
  private async replayHangs(c: Case): Promise<boolean> {
    let watch: NodeJS.Timeout | undefined;
    const stall = new Promise<null>((resolve) => {
      watch = setInterval(() => {
        if (!this.server.running || now() - this.opts.lastHealthy() > this.opts.stallMs) resolve(null);
      }, 250);
    });
    const req = c.build();
    // A WebSocket case is replayed as a message (its `build` gives method WS and the message).
    const send: Promise<'answer' | 'timeout' | 'other'> =
      req.method === 'WS' && this.lanes
        ? runOnLane(this.lanes, this.server.port, req.body!, this.opts.websocket!.bodyLimit * WS_READ_LIMIT_FACTOR, this.opts.timeoutMs).then((run) => {
            if (run.result.kind === 'answer') this.replayed.push({ c, outcome: judgeWs(run, NO_POST, req.body!, req.body!, this.opts.websocket!.bodyLimit), websocket: true });
            return run.result.kind === 'answer' ? 'answer' : run.result.kind === 'timeout' ? 'timeout' : 'other';
          })
        : sendRaw(this.server.port, req, this.opts.timeoutMs).then((result) => {
            if (result.kind === 'response') this.replayed.push({ c, outcome: judge(c, result, req.method, req.target) });
            return result.kind === 'response' ? 'answer' : result.kind === 'timeout' ? 'timeout' : 'other';
          });
    const result = await Promise.race([send, stall]);
    clearInterval(watch);
    // A hang, or an answer after which the server is gone.
    const hung = result === null || !this.server.running || (result === 'timeout' && !(await this.healthy()));
    if (hung) await this.restart();
    return hung;
  }

  /** Sends one case alone after the run (to pin a /healthz stall on it); true when it hung or killed the server. */
  replayAlone(c: Case): Promise<boolean> {
    return this.replayHangs(c);
  }

  /** The cases in flight during [from, to] (epoch ms), for a slow /healthz sample. */
  overlapping(from: number, to: number): Sent[] {
    return this.sent.filter((s) => s.start <= to && s.end >= from);
  }
}
