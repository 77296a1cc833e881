// One suite for both implementations of `Limits`: in-process (MemoryLimits) and Redis
// (RedisLimits on TEST_REDIS_URL, which `npm test` starts; each test on keys of its own).
// Every count is exact under concurrency; leases come back when released and, on Redis,
// when their holder stops renewing them (a crashed instance); two RedisLimits on one Redis
// (two instances) share every count.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { Lease, LeaseKind, Limits } from './limits.ts';
import { MemoryLimits } from './memory-limits.ts';
import { RedisLimits } from './redis-limits.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = { warn: () => undefined, info: () => undefined };

interface Options {
  leaseMs?: number;
  windowMs?: number;
}

interface Backend {
  name: string;
  /** Why the backend's tests cannot run here, or false. */
  skip: string | false;
  /** Why a test of several instances does not apply, or false. */
  single: string | false;
  /** A fresh limits (its own keys); `peer` another instance on the same counts. */
  make(options?: Options): Promise<{ limits: Limits; peer(): Promise<Limits> }>;
}

const opened: Limits[] = [];
after(async () => {
  for (const l of opened) await l.close();
});
const track = <T extends Limits>(l: T): T => (opened.push(l), l);

const redisUrl = process.env.TEST_REDIS_URL;
const backends: Backend[] = [
  {
    name: 'in-process (MemoryLimits)',
    skip: false,
    single: 'in-process counts belong to one process: a crashed one takes them with it, and there is no second instance to share with',
    async make(options = {}) {
      const limits = track(new MemoryLimits(options.windowMs));
      return { limits, peer: async () => limits };
    },
  },
  {
    name: 'Redis (RedisLimits)',
    skip: redisUrl ? false : 'TEST_REDIS_URL is not set: run through `npm test`, which starts a redis-server (or install redis-server)',
    single: false,
    async make(options = {}) {
      const prefix = `test:${randomBytes(6).toString('hex')}:`;
      const open = () =>
        RedisLimits.open({ url: redisUrl!, onFailure: 'closed', leaseMs: options.leaseMs ?? 30_000, instanceId: 'test', log: quiet, prefix, windowMs: options.windowMs }).then(track);
      return { limits: await open(), peer: open };
    },
  },
];

const account = () => `acct_${randomBytes(6).toString('hex')}`;

/** `tries` acquires at once, spread over `limits`: the leases taken, each with the instance that holds it. */
async function taken(limits: Limits[], kind: LeaseKind, owner: string, max: number, tries: number): Promise<{ by: Limits; lease: Lease }[]> {
  const results = await Promise.all(
    Array.from({ length: tries }, async (_, i) => {
      const by = limits[i % limits.length]!;
      return { by, lease: await by.acquire(kind, owner, max) };
    }),
  );
  return results.filter((r): r is { by: Limits; lease: Lease } => r.lease !== null);
}

const acquireAll = async (limits: Limits[], kind: LeaseKind, owner: string, max: number, tries: number) =>
  (await taken(limits, kind, owner, max, tries)).map((t) => t.lease);

for (const backend of backends) {
  describe(backend.name, { skip: backend.skip }, () => {
    test('requests per minute: exactly the limit of many concurrent hits pass, each told what remains', async () => {
      const { limits } = await backend.make();
      const key = `key_${randomBytes(4).toString('hex')}`;
      const now = Date.now();
      const windows = await Promise.all(Array.from({ length: 50 }, () => limits.hitRequestsPerMinute(key, 10, now)));
      const allowed = windows.filter((w) => w.allowed);
      assert.equal(allowed.length, 10);
      assert.deepEqual(allowed.map((w) => w.remaining).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const w of windows) {
        assert.equal(w.limit, 10);
        assert.ok(w.resetMs > 0 && w.resetMs <= 60_000, `resetMs ${w.resetMs}`);
        if (!w.allowed) assert.equal(w.remaining, 0);
      }
      // Another key has its own window.
      assert.equal((await limits.hitRequestsPerMinute(`${key}-other`, 10, now)).allowed, true);
    });

    test('requests per minute: the window resets once it has passed', async () => {
      const { limits } = await backend.make({ windowMs: 300 });
      const key = `key_${randomBytes(4).toString('hex')}`;
      assert.equal((await limits.hitRequestsPerMinute(key, 1, Date.now())).allowed, true);
      assert.equal((await limits.hitRequestsPerMinute(key, 1, Date.now())).allowed, false);
      await pause(450);
      const again = await limits.hitRequestsPerMinute(key, 1, Date.now());
      assert.equal(again.allowed, true);
      assert.equal(again.remaining, 0);
    });

    test('admit: the window and a slot in one step, each exact under concurrency; a refused request takes no slot', async () => {
      const { limits } = await backend.make();
      const key = `key_${randomBytes(4).toString('hex')}`;
      const owner = account();
      const now = Date.now();
      // 30 at once, RPM 10, 6 slots: 10 counted, 6 of them with a slot.
      const admissions = await Promise.all(Array.from({ length: 30 }, () => limits.admit(key, 10, owner, 6, now)));
      assert.equal(admissions.filter((a) => a.window.allowed).length, 10);
      assert.equal(admissions.filter((a) => a.slot).length, 6);
      assert.ok(admissions.every((a) => a.window.allowed || a.slot === null));
      assert.equal(await limits.acquire('slot', owner, 6), null, 'admit took the same slots acquire counts');
      // The window full: refused without a slot, even with slots free.
      for (const a of admissions) if (a.slot) await limits.release(a.slot);
      const refused = await limits.admit(key, 10, owner, 6, now);
      assert.deepEqual([refused.window.allowed, refused.window.remaining, refused.slot], [false, 0, null]);
      // Allowed with the slots full: counted, no slot.
      const other = `${key}-b`;
      const held = await acquireAll([limits], 'slot', owner, 6, 6);
      const noSlot = await limits.admit(other, 10, owner, 6, now);
      assert.deepEqual([noSlot.window.allowed, noSlot.window.remaining, noSlot.slot], [true, 9, null]);
      for (const l of held) await limits.release(l);
    });

    for (const [kind, max] of [
      ['slot', 6],
      ['socket', 8],
    ] as const) {
      test(`${kind}s: exactly ${max} of 40 concurrent acquires succeed, each with its own holder`, async () => {
        const { limits } = await backend.make();
        const owner = account();
        const leases = await acquireAll([limits], kind, owner, max, 40);
        assert.equal(leases.length, max);
        assert.equal(new Set(leases.map((l) => l.holder)).size, max);
        for (const l of leases) assert.deepEqual([l.kind, l.account], [kind, owner]);
        assert.equal(await limits.acquire(kind, owner, max), null);
      });

      test(`${kind}s: a release frees one (once, however often it is released); accounts and kinds count apart`, async () => {
        const { limits } = await backend.make();
        const owner = account();
        const leases = await acquireAll([limits], kind, owner, max, max);
        assert.equal(leases.length, max);
        // Another account, and the other kind of the same account, are not affected.
        assert.notEqual(await limits.acquire(kind, account(), max), null);
        assert.notEqual(await limits.acquire(kind === 'slot' ? 'socket' : 'slot', owner, max), null);

        await limits.release(leases[0]!);
        await limits.release(leases[0]!);
        const next = await limits.acquire(kind, owner, max);
        assert.notEqual(next, null);
        assert.equal(await limits.acquire(kind, owner, max), null, 'a second release freed nothing more');

        for (const l of [...leases.slice(1), next!]) await limits.release(l);
        assert.equal((await acquireAll([limits], kind, owner, max, max + 3)).length, max, 'all back');
      });

      test(`${kind}s: a held lease stays held past its lease period (renewed while held)`, async () => {
        const { limits } = await backend.make({ leaseMs: 300 });
        const owner = account();
        const leases = await acquireAll([limits], kind, owner, 2, 2);
        assert.equal(leases.length, 2);
        await pause(1_000);
        assert.equal(await limits.acquire(kind, owner, 2), null);
        await limits.release(leases[0]!);
        assert.notEqual(await limits.acquire(kind, owner, 2), null);
      });

      test(`${kind}s: a crashed holder's leases come back within one lease period`, { skip: backend.single }, async () => {
        const { limits: crashed, peer } = await backend.make({ leaseMs: 400 });
        const owner = account();
        assert.equal((await acquireAll([crashed], kind, owner, 3, 3)).length, 3);
        // Closed without releasing: no renewals, as an instance killed with SIGKILL.
        await crashed.close();
        const survivor = await peer();
        assert.equal(await survivor.acquire(kind, owner, 3), null, 'still held right after the crash');
        let back: Lease[] = [];
        for (let i = 0; i < 100 && back.length === 0; i++) {
          await pause(50);
          back = await acquireAll([survivor], kind, owner, 3, 3);
        }
        assert.equal(back.length, 3, 'every lease of the crashed holder came back');
      });

      test(`${kind}s: two instances on one backend share the ${max} exactly`, { skip: backend.single }, async () => {
        const { limits: a, peer } = await backend.make();
        const b = await peer();
        const owner = account();
        const leases = await taken([a, b], kind, owner, max, 40);
        assert.equal(leases.length, max);
        assert.equal(await a.acquire(kind, owner, max), null);
        assert.equal(await b.acquire(kind, owner, max), null);
        for (const t of leases) await t.by.release(t.lease);
        // Half taken on each: full on both; one released on A is free on B.
        const onA = await acquireAll([a], kind, owner, max, max / 2);
        const onB = await acquireAll([b], kind, owner, max, max / 2);
        assert.equal(onA.length + onB.length, max);
        assert.equal(await a.acquire(kind, owner, max), null);
        assert.equal(await b.acquire(kind, owner, max), null);
        await a.release(onA[0]!);
        assert.notEqual(await b.acquire(kind, owner, max), null);
        assert.equal(await a.acquire(kind, owner, max), null);
      });
    }

    test('admit: two instances on one backend share the window and the slots', { skip: backend.single }, async () => {
      const { limits: a, peer } = await backend.make();
      const b = await peer();
      const key = `key_${randomBytes(4).toString('hex')}`;
      const owner = account();
      const admissions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).admit(key, 10, owner, 6, Date.now())));
      assert.equal(admissions.filter((x) => x.window.allowed).length, 10);
      assert.equal(admissions.filter((x) => x.slot).length, 6);
      assert.equal(await a.acquire('slot', owner, 6), null);
      assert.equal(await b.acquire('slot', owner, 6), null);
    });

    test('requests per minute: two instances on one backend count one window', { skip: backend.single }, async () => {
      const { limits: a, peer } = await backend.make();
      const b = await peer();
      const key = `key_${randomBytes(4).toString('hex')}`;
      const windows = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hitRequestsPerMinute(key, 10, Date.now())));
      assert.equal(windows.filter((w) => w.allowed).length, 10);
      assert.equal((await a.hitRequestsPerMinute(key, 10, Date.now())).allowed, false);
      assert.equal((await b.hitRequestsPerMinute(key, 10, Date.now())).allowed, false);
    });
  });
}
