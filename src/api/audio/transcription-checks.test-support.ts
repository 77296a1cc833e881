// Test support for the transcription tests: the SDK's refusals, SRT/VTT cues, rising times, an account's credits.
import assert from 'node:assert/strict';
import type { TestServer } from '../../../test/helpers/test-server.ts';

export async function refused(promise: Promise<unknown>, status: number, param: string | null, code?: string) {
  await assert.rejects(promise, (err: any) => {
    assert.equal(err.status, status, JSON.stringify(err.error));
    assert.equal(err.error?.param ?? null, param, JSON.stringify(err.error));
    if (code) assert.equal(err.error?.code, code);
    assert.ok(err.requestID ?? err.headers?.get?.('x-request-id'));
    return true;
  });
}

/** SRT or VTT cues: their times and text. */
export function cues(text: string, separator: ',' | '.') {
  const time = (s: string) => {
    const [h, m, rest] = s.split(':');
    const [sec, ms] = rest!.split(separator);
    return Number(h) * 3600 + Number(m) * 60 + Number(sec) + Number(ms) / 1000;
  };
  const re = new RegExp(`(\\d{2}:\\d{2}:\\d{2}\\${separator}\\d{3}) --> (\\d{2}:\\d{2}:\\d{2}\\${separator}\\d{3})\\n(.+)`, 'g');
  return [...text.matchAll(re)].map((m) => ({ start: time(m[1]!), end: time(m[2]!), text: m[3]! }));
}

export function checkRising(list: { start: number; end: number }[]) {
  let last = 0;
  for (const c of list) {
    assert.ok(c.start >= last, `a cue starts at ${c.start}, before ${last}`);
    assert.ok(c.end >= c.start, `a cue ends at ${c.end}, before its start ${c.start}`);
    last = c.end;
  }
}

export const credits = async (server: TestServer, accountId: string) => (await server.admin('GET', `/accounts/${accountId}`)).body.available_credits as number;
