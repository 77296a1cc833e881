// The server as a user runs it (`npm start`: the compiled tree) keeps a request's
// garbage in the young generation. V8 pretenures an allocation site whose objects it has
// seen outlive a scavenge; right after start the young generation is small, so objects
// of the request path can look long-lived and their site be pretenured for good. Every
// later request's object from that site then goes to the old space and holds the rest
// of its request alive through scavenges: each scavenge copies and promotes whole
// requests (about 9 KB each), which cost 40% of the throughput of a non-streamed chat.
// Measured without timing anything: the old space's growth per request between major
// collections (/metrics, prom-client's default heap figures).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Agent } from 'undici';
import { sample, startChatUpstream, upstreamEnv } from '../observability/observability.test-support.ts';
import { startServerProcess, userEnv } from '../../test/helpers/server-process.ts';

const KEY = 'sk-agent-young-garbage-0123456789abcdefghijkl';
const ADMIN = 'agent-young-garbage-admin-0123456789abcdef';
const CONNECTIONS = 10;

test('requests leave their garbage young: the old space grows by under 3 KB per chat request', { timeout: 600_000 }, async (t) => {
  const upstream = await startChatUpstream();
  t.after(() => upstream.close());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'young-garbage-'));
  t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServerProcess(
    userEnv({
      PORT: '0',
      DATA_DIR: dataDir,
      AGENT_API_BOOTSTRAP_KEY: KEY,
      AGENT_API_ADMIN_TOKEN: ADMIN,
      AGENT_API_MAX_RPM: '100000000',
      AGENT_API_ACCOUNT_CONCURRENCY: '1000',
      ...upstreamEnv(upstream),
    }),
  );
  t.after(() => server.stop());
  const dispatcher = new Agent({ connections: CONNECTIONS });
  t.after(() => dispatcher.close());
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const accounts = (await (await fetch(`${server.origin}/admin/v1/accounts`, { headers: admin })).json()) as { data: { id: string }[] };
  const credited = await fetch(`${server.origin}/admin/v1/accounts/${accounts.data[0]!.id}/credits`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 999_000_000, reason: 'test' }) });
  assert.equal(credited.status, 200, await credited.text());

  const body = JSON.stringify({ model: 'agent', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'What is the capital of France?' }] });
  // `n` chat requests, CONNECTIONS at a time, as a load generator sends them.
  const load = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next++ < n) {
          const res = await fetch(`${server.origin}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
            body,
            dispatcher,
          } as RequestInit);
          const text = await res.text();
          assert.equal(res.status, 200, text);
        }
      }),
    );
  };
  const heap = async () => {
    const text = await (await fetch(`${server.origin}/metrics`)).text();
    return { old: sample(text, 'nodejs_heap_space_size_used_bytes', { space: 'old' })!, majors: sample(text, 'nodejs_gc_duration_seconds_count', { kind: 'major' }) ?? 0 };
  };

  // Right after start, as the bench and a freshly deployed instance see it.
  await load(1_500);
  const perRequest: number[] = [];
  for (let attempt = 0; attempt < 6 && perRequest.length < 2; attempt++) {
    const before = await heap();
    await load(1_000);
    const after = await heap();
    // A major collection in between shrinks the old space: that window says nothing.
    if (after.majors === before.majors) perRequest.push((after.old - before.old) / 1_000);
  }
  assert.ok(perRequest.length > 0, 'every window had a major collection');
  const growth = Math.min(...perRequest);
  assert.ok(growth < 3_000, `the old space grew by ${growth.toFixed(0)} bytes per request (${perRequest.map((x) => x.toFixed(0)).join(', ')})`);
});
