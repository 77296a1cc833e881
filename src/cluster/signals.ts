// Signals between the instances that share one database: small notices ("job X was
// asked to stop", "key Y changed", "response Z has new output") that make another
// instance act at once on what it would otherwise notice later, at its next lease
// renewal, cache expiry or poll. A signal carries an id, never a secret or a payload:
// the database stays the truth and every receiver reads it again, so a lost signal only
// delays what would happen anyway.
//
// One instance (no REDIS_URL): `LocalSignals`, delivered in this process. Several:
// `RedisSignals`, the same plus Redis pub/sub (a dedicated subscriber connection, one
// channel per topic under a prefix). Redis unreachable: publishing drops the notice
// (logged once per outage) and instances fall back to today's timing; when the
// subscriber connects again, `onResync` handlers run, since notices may have been missed.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const TOPICS = ['job.cancel', 'key.changed', 'response.updated'] as const;
/** job.cancel: a running job's cancel was recorded; key.changed: a key's row changed; response.updated: a background response's stored state moved on. */
export type Topic = (typeof TOPICS)[number];

export type SignalHandler = (id: string) => void;

export interface Signals {
  /**
   * Tells every instance: this one's handlers run now (synchronously), the others' as
   * soon as Redis carries it. Call it after the change is committed. Never throws, and
   * the promise never rejects: it resolves once Redis has handed the signal to the other instances (so an
   * answer sent after it cannot overtake it), or gave up (an outage, 1 s at most).
   */
  publish(topic: Topic, id: string): Promise<void>;
  /** Runs `handler` for every signal on `topic`, this instance's own included; returns the unsubscribe. */
  subscribe(topic: Topic, handler: SignalHandler): () => void;
  /** Runs `handler` when signals from other instances may have been missed (a reconnect). */
  onResync(handler: () => void): () => void;
  /** Resolves once signals reach other instances, or the first attempt to connect failed (never rejects). */
  ready(): Promise<void>;
  /** Whether signals reach other instances: false for LocalSignals, and while Redis is unreachable. */
  readonly shared: boolean;
  close(): Promise<void>;
}

export interface SignalsLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Ids are ours (job_, key_, resp_ ...): letters, digits and a few separators. */
const ID = /^[A-Za-z0-9_.:-]{1,200}$/;
/** A message is `{"i": id, "f": sender}`: anything longer is not one of ours. */
const MAX_MESSAGE_BYTES = 512;

/** In this process only: what one instance needs. */
export class LocalSignals implements Signals {
  private readonly handlers = new Map<Topic, Set<SignalHandler>>();
  private readonly resyncs = new Set<() => void>();
  get shared(): boolean {
    return false;
  }

  constructor(protected readonly log?: SignalsLog) {}

  publish(topic: Topic, id: string): Promise<void> {
    // Not one of our ids (a bug): nobody could hold it, and a receiver would drop it anyway.
    if (!ID.test(id)) {
      this.log?.warn({ topic }, 'a signal with a malformed id was not sent');
      return Promise.resolve();
    }
    this.deliver(topic, id);
    return Promise.resolve();
  }

  subscribe(topic: Topic, handler: SignalHandler): () => void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(handler);
    return () => void set.delete(handler);
  }

  onResync(handler: () => void): () => void {
    this.resyncs.add(handler);
    return () => void this.resyncs.delete(handler);
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {}

  protected deliver(topic: Topic, id: string): void {
    for (const handler of this.handlers.get(topic) ?? []) {
      try {
        handler(id);
      } catch (err) {
        // One receiver's failure must not stop the others, nor the publisher.
        this.log?.warn({ err, topic }, 'a signal handler failed');
      }
    }
  }

  protected resync(): void {
    for (const handler of this.resyncs) {
      try {
        handler();
      } catch (err) {
        this.log?.warn({ err }, 'a signal resync handler failed');
      }
    }
  }
}

export interface RedisSignalsOptions {
  url: string;
  log: SignalsLog;
  /** Channel names are `<prefix><topic>`; default `agent-api:signals:`. */
  prefix?: string;
  /** The connections' client names (CLIENT LIST), `<name>-pub` and `<name>-sub`; default `agent-api-signals`. */
  name?: string;
}

/** Redis pub/sub between instances, on top of the in-process delivery. */
export class RedisSignals extends LocalSignals {
  /** Tells this process's own messages apart when Redis echoes them back (they were delivered here already). */
  private readonly sender = randomUUID();
  private readonly prefix: string;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly channels: Map<string, Topic>;
  private down = false;
  private subscribed = false;
  private closed = false;
  private settle!: () => void;
  private readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  constructor(options: RedisSignalsOptions) {
    super(options.log);
    this.prefix = options.prefix ?? 'agent-api:signals:';
    const name = options.name ?? 'agent-api-signals';
    this.channels = new Map(TOPICS.map((t) => [this.prefix + t, t]));
    const common = {
      // Never wait for Redis: a signal that cannot go now is dropped (the fallbacks cover it).
      connectTimeout: 2_000,
      retryStrategy: (times: number) => Math.min(100 * times, 2_000),
      lazyConnect: false,
    };
    this.pub = new Redis(options.url, { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 1_000, connectionName: `${name}-pub` });
    // Subscriptions wait in the offline queue and are renewed on every reconnect (autoResubscribe).
    this.sub = new Redis(options.url, { ...common, connectionName: `${name}-sub`, maxRetriesPerRequest: null });
    for (const client of [this.pub, this.sub]) {
      client.on('error', (err: Error) => this.outage(err));
      client.on('close', () => this.outage(new Error('connection closed')));
      client.on('ready', () => this.recovered());
    }
    this.sub.on('close', () => (this.subscribed = false));
    this.sub.on('message', (channel: string, message: string) => this.receive(channel, message));
    // On every (re)connect: subscribe (again: harmless), and once Redis has confirmed it,
    // resync, since whatever was published while we were away was missed.
    this.sub.on('ready', () => {
      this.sub.subscribe(...this.channels.keys()).then(
        () => {
          this.subscribed = true;
          this.recovered();
          this.resync();
        },
        (err: unknown) => this.outage(err as Error),
      );
    });
  }

  override ready(): Promise<void> {
    return this.settled;
  }

  override get shared(): boolean {
    return this.subscribed && !this.down && this.pub.status === 'ready';
  }

  override publish(topic: Topic, id: string): Promise<void> {
    const here = super.publish(topic, id);
    if (this.closed || !ID.test(id)) return here;
    const message = JSON.stringify({ i: id, f: this.sender });
    return this.pub.publish(this.prefix + topic, message).then(
      () => this.recovered(),
      (err: unknown) => this.outage(err as Error),
    );
  }

  override async close(): Promise<void> {
    this.closed = true;
    this.sub.disconnect();
    this.pub.disconnect();
  }

  private receive(channel: string, message: string): void {
    const topic = this.channels.get(channel);
    if (!topic || message.length > MAX_MESSAGE_BYTES) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      return;
    }
    if (typeof parsed !== 'object' || parsed === null) return;
    const { i, f } = parsed as { i?: unknown; f?: unknown };
    if (typeof i !== 'string' || !ID.test(i) || f === this.sender) return;
    this.deliver(topic, i);
  }

  private outage(err: Error): void {
    this.settle();
    if (this.closed || this.down) return;
    this.down = true;
    this.log?.warn(
      { err: { message: err.message } },
      'Redis signals are unavailable: cancels reach other instances at their next lease renewal and key changes when their caches expire, until Redis is back',
    );
  }

  private recovered(): void {
    if (this.closed || !this.subscribed || this.sub.status !== 'ready' || this.pub.status !== 'ready') return;
    this.settle();
    if (!this.down) return;
    this.down = false;
    this.log?.info({}, 'Redis signals are available again');
  }
}

/** RedisSignals when REDIS_URL is set, else LocalSignals. */
export function openSignals(redisUrl: string | undefined, log: SignalsLog): Signals {
  return redisUrl ? new RedisSignals({ url: redisUrl, log }) : new LocalSignals(log);
}
