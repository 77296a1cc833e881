// Limits on Redis (REDIS_URL), exact across instances: every check-and-take is one Lua
// script (one round trip, EVALSHA), so concurrent requests on any instance cannot both
// take the last unit.
//   - Requests per minute: a counter per key that expires one window after its first
//     request (a fixed window on Redis's clock, as the in-process one).
//   - Slots and sockets: a sorted set per account and kind, holder -> expiry (Redis's
//     clock). Taking one drops the expired holders first and adds one only while fewer
//     than max are live; releasing removes the holder. Each instance renews the leases it
//     holds every third of a lease, so a crashed instance's leases come back within one.
//   - The limits step's RPM check and slot are one script (`admit`), so a request pays
//     one round trip before it runs and one (the release) after. It touches two keys:
//     one Redis server (with replicas or Sentinel), not Redis Cluster.
// Redis unreachable: every check fails fast (no offline queue, no retry of a command
// that may have run) and, by default, refuses the request with a 503 naming Redis
// (`closed`); with `open`, counts in this process until Redis answers again. /readyz
// reports it either way (`health`).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { serviceUnavailable } from '../errors.ts';
import { MemoryLimits, WINDOW_MS } from './memory-limits.ts';
import type { Admission, Lease, LeaseKind, Limits, LimitsHealth, RateWindow } from './limits.ts';

/** A command unanswered this long counts as Redis down (a hung server must not hang requests). */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 2_000;

export type RedisFailureMode = 'closed' | 'open';

export interface RedisLimitsOptions {
  url: string;
  /** What a request gets while Redis does not answer: refused (`closed`), or counted in this process (`open`). */
  onFailure: RedisFailureMode;
  /** How long a slot or socket outlives its holder's last renewal. */
  leaseMs: number;
  /** Part of every holder id, for whoever reads Redis. */
  instanceId: string;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Prefix of every key (tests use their own on a shared Redis). */
  prefix?: string;
  /** The requests-per-minute window (tests shorten it). */
  windowMs?: number;
}

// Requests per minute: counts the request in KEYS[1], the key's counter (ARGV[1] limit,
// ARGV[2] window ms), or returns {0, count, ms until reset} when the window is full.
const RPM_HIT_LUA = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if n >= limit then return {0, n, redis.call('PTTL', KEYS[1])} end
n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end`;

// Redis's clock in ms, the one every instance's leases are measured on.
const NOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// Takes a lease of the set `key` for `holder` when fewer than `max` are live (the expired
// dropped first); returns `full` when not.
const take = (key: string, max: string, leaseMs: string, holder: string, full: string) => `
redis.call('ZREMRANGEBYSCORE', ${key}, '-inf', now)
if redis.call('ZCARD', ${key}) >= tonumber(${max}) then return ${full} end
redis.call('ZADD', ${key}, now + tonumber(${leaseMs}), ${holder})
redis.call('PEXPIRE', ${key}, ${leaseMs})`;

// Returns {1, count, ms until reset}.
const RPM_LUA = `${RPM_HIT_LUA}
return {1, n, ttl}`;

// A lease. KEYS[1] the account's set of holders; ARGV max, lease ms, holder. Returns 1 taken, 0 full.
const ACQUIRE_LUA = `${NOW_LUA}${take('KEYS[1]', 'ARGV[1]', 'ARGV[2]', 'ARGV[3]', '0')}
return 1`;

// The limits step in one round trip: requests per minute, then a slot when allowed.
// KEYS[1] the key's counter, KEYS[2] the account's slots; ARGV limit, window ms, max,
// lease ms, holder. Returns {allowed, count, ms until reset, 1 when a slot was taken}.
const ADMIT_LUA = `${RPM_HIT_LUA}${NOW_LUA}${take('KEYS[2]', 'ARGV[3]', 'ARGV[4]', 'ARGV[5]', '{1, n, ttl, 0}')}
return {1, n, ttl, 1}`;

// Renewal of this instance's holders in one set. KEYS[1] the set; ARGV lease ms, holders.
// A holder whose lease lapsed (Redis was away longer than a lease) is added back: its
// call still runs, and counting it errs on refusing, never on running unlimited.
const RENEW_LUA = `${NOW_LUA}
local expiry = now + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], expiry, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return #ARGV - 1`;

interface LimitCommands {
  limitsRpm(key: string, limit: number, windowMs: number): Promise<[number, number, number]>;
  limitsAdmit(rpmKey: string, slotKey: string, limit: number, windowMs: number, max: number, leaseMs: number, holder: string): Promise<[number, number, number, number]>;
  limitsAcquire(key: string, max: number, leaseMs: number, holder: string): Promise<number>;
  limitsRenew(key: string, leaseMs: number, ...holders: string[]): Promise<number>;
}

export class RedisLimits implements Limits {
  private readonly redis: Redis & LimitCommands;
  private readonly prefix: string;
  private readonly windowMs: number;
  /** Counts while Redis is down, in `open` mode. */
  private readonly local: MemoryLimits;
  /** The leases this instance holds on Redis, by set key: renewed until released. */
  private readonly held = new Map<string, Set<string>>();
  private readonly renewal: NodeJS.Timeout;
  private readonly holderPrefix: string;
  private nextHolder = 0;
  /** Why Redis is down (the last failure); null while it answers. */
  private failure: string | null = null;
  private closed = false;

  private constructor(private readonly options: RedisLimitsOptions) {
    this.prefix = options.prefix ?? 'agent-api:limits:';
    this.windowMs = options.windowMs ?? WINDOW_MS;
    this.local = new MemoryLimits(this.windowMs);
    this.holderPrefix = `${options.instanceId}:${randomBytes(6).toString('hex')}:`;
    const redis = new Redis(options.url, {
      lazyConnect: true,
      // Fail fast while disconnected, and never resend a command that may have run (a
      // retried INCR would count twice): a failed check is answered at once.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
      // Checks issued in the same turn of the event loop share one write.
      enableAutoPipelining: true,
      connectionName: 'agent-api-limits',
    });
    redis.defineCommand('limitsRpm', { numberOfKeys: 1, lua: RPM_LUA });
    redis.defineCommand('limitsAdmit', { numberOfKeys: 2, lua: ADMIT_LUA });
    redis.defineCommand('limitsAcquire', { numberOfKeys: 1, lua: ACQUIRE_LUA });
    redis.defineCommand('limitsRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    redis.on('error', (err: Error) => this.down(err));
    redis.on('ready', () => this.up());
    this.redis = redis as Redis & LimitCommands;
    this.renewal = setInterval(() => void this.renew(), Math.max(50, Math.floor(options.leaseMs / 3))).unref();
  }

  /** Connects (a Redis down at start leaves the service up but unready, and keeps trying). */
  static async open(options: RedisLimitsOptions): Promise<RedisLimits> {
    const limits = new RedisLimits(options);
    await limits.redis.connect().catch((err: unknown) => limits.down(err));
    return limits;
  }

  async hitRequestsPerMinute(key: string, limit: number, now: number): Promise<RateWindow> {
    let reply: [number, number, number];
    try {
      reply = await this.redis.limitsRpm(`${this.prefix}rpm:${key}`, limit, this.windowMs);
    } catch (err) {
      return this.unreachable(err, () => this.local.hit(key, limit, now));
    }
    if (this.failure !== null) this.up();
    const [allowed, count, ttl] = reply;
    return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - count), resetMs: Math.max(0, ttl) };
  }

  async admit(key: string, rpm: number, account: string, maxSlots: number, now: number): Promise<Admission> {
    const set = this.setKey('slot', account);
    const holder = this.holderPrefix + this.nextHolder++;
    let reply: [number, number, number, number];
    try {
      reply = await this.redis.limitsAdmit(`${this.prefix}rpm:${key}`, set, rpm, this.windowMs, maxSlots, this.options.leaseMs, holder);
    } catch (err) {
      return this.unreachable(err, () => this.local.admit(key, rpm, account, maxSlots, now));
    }
    if (this.failure !== null) this.up();
    const [allowed, count, ttl, taken] = reply;
    const window = { allowed: allowed === 1, limit: rpm, remaining: Math.max(0, rpm - count), resetMs: Math.max(0, ttl) };
    return { window, slot: taken === 1 ? this.hold('slot', account, set, holder) : null };
  }

  async acquire(kind: LeaseKind, account: string, max: number): Promise<Lease | null> {
    const set = this.setKey(kind, account);
    const holder = this.holderPrefix + this.nextHolder++;
    let taken: number;
    try {
      taken = await this.redis.limitsAcquire(set, max, this.options.leaseMs, holder);
    } catch (err) {
      // Taken or not, a lease nobody renews expires by itself.
      return this.unreachable(err, () => this.local.take(kind, account, max));
    }
    if (this.failure !== null) this.up();
    return taken === 1 ? this.hold(kind, account, set, holder) : null;
  }

  /** A lease taken on Redis, renewed from now on until released. */
  private hold(kind: LeaseKind, account: string, set: string, holder: string): Lease {
    let holders = this.held.get(set);
    if (!holders) this.held.set(set, (holders = new Set()));
    holders.add(holder);
    return { kind, account, holder };
  }

  async release(lease: Lease): Promise<void> {
    if (this.local.giveBack(lease)) return;
    const set = this.setKey(lease.kind, lease.account);
    const holders = this.held.get(set);
    if (!holders?.delete(lease.holder)) return;
    if (holders.size === 0) this.held.delete(set);
    // Not renewed from now on: if Redis does not take the removal, the lease lapses.
    await this.redis.zrem(set, lease.holder).catch((err: unknown) => this.down(err));
  }

  async health(): Promise<LimitsHealth> {
    try {
      await this.redis.ping();
      if (this.failure !== null) this.up();
      return { backend: 'redis', ok: true };
    } catch (err) {
      this.down(err);
      return { backend: 'redis', ok: false, error: this.failure ?? 'not answering' };
    }
  }

  /** Stops renewing and disconnects. Leases still held lapse within one lease, as a crashed instance's. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewal);
    await this.local.close();
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private setKey(kind: LeaseKind, account: string): string {
    return `${this.prefix}${kind}:${account}`;
  }

  /** One script per set of this instance's holders, sent together (auto-pipelined). */
  private async renew(): Promise<void> {
    if (this.held.size === 0 || this.redis.status !== 'ready') return;
    const leaseMs = this.options.leaseMs;
    await Promise.all([...this.held].map(([set, holders]) => this.redis.limitsRenew(set, leaseMs, ...holders))).catch((err: unknown) => this.down(err));
  }

  private unreachable<T>(err: unknown, local: () => T): T {
    this.down(err);
    if (this.options.onFailure === 'open') return local();
    throw serviceUnavailable('Rate and concurrency limits are counted in Redis, which is not answering, so the request was not run. Try again shortly.');
  }

  private down(err: unknown): void {
    if (this.closed) return;
    const reason = describe(err);
    if (this.failure === null) {
      this.options.log.warn(
        { reason, on_failure: this.options.onFailure },
        this.options.onFailure === 'closed'
          ? 'Redis is not answering: requests are refused (503) until it does'
          : 'Redis is not answering: limits are counted in this process until it does',
      );
    }
    // "not connected" says less than the connection's own error (ECONNREFUSED...): kept second.
    if (reason !== NOT_CONNECTED || this.failure === null) this.failure = reason;
  }

  private up(): void {
    if (this.failure !== null) this.options.log.info({}, 'Redis answers again: limits are counted there');
    this.failure = null;
  }
}

const NOT_CONNECTED = 'not connected';

/** A failure's cause, without the URL (it may hold a password). */
function describe(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `connection failed: ${code}`;
  const message = err instanceof Error ? err.message : String(err);
  if (/timed out/i.test(message)) return 'timed out';
  if (/writeable|closed|reconnecting/i.test(message)) return NOT_CONNECTED;
  return message.replace(/rediss?:\/\/\S+/g, 'redis://…').slice(0, 200);
}
