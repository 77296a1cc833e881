import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser } from './sse-parser.ts';
import type { SseEvent } from './sse-parser.ts';

async function parse(chunks: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const encoder = new TextEncoder();
  const parser = new SseParser();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...parser.push(typeof c === 'string' ? encoder.encode(c) : c));
  out.push(...parser.end());
  return out;
}

const msg = (data: string, event = 'message'): SseEvent => ({ event, data });

describe('SseParser', () => {
  it('parses data events and [DONE]', async () => {
    assert.deepEqual(await parse(['data: {"a":1}\n\ndata: [DONE]\n\n']), [msg('{"a":1}'), msg('[DONE]')]);
  });

  it('handles \\r\\n and lone \\r line ends, even split between chunks', async () => {
    assert.deepEqual(await parse(['data: one\r\n\r\ndata: two\r', '\n\r', '\ndata: three\r\r']), [
      msg('one'),
      msg('two'),
      msg('three'),
    ]);
  });

  it('skips comments and keep-alives', async () => {
    assert.deepEqual(await parse([': OPENROUTER PROCESSING\n\n', ':\n', 'data: x\n\n', ': ping\n\n']), [msg('x')]);
  });

  it('joins multi-line data with \\n and keeps the event name', async () => {
    assert.deepEqual(await parse(['event: error\ndata: {"error":\ndata: "boom"}\n\n']), [msg('{"error":\n"boom"}', 'error')]);
  });

  it('reassembles events split at every byte, UTF-8 included', async () => {
    const bytes = new TextEncoder().encode('data: {"content":"wörld ✓"}\n\ndata: [DONE]\n\n');
    const pieces = Array.from(bytes, (b) => Uint8Array.of(b));
    assert.deepEqual(await parse(pieces), [msg('{"content":"wörld ✓"}'), msg('[DONE]')]);
  });

  it('follows field syntax: optional space, no colon, unknown fields, id/retry ignored', async () => {
    assert.deepEqual(await parse(['data:tight\nid: 7\nretry: 100\nfoo: bar\n\ndata\n\n']), [msg('tight'), msg('')]);
  });

  it('strips a leading BOM and dispatches a last event without a blank line', async () => {
    assert.deepEqual(await parse(['\uFEFFdata: a\n\n', 'data: [DONE]']), [msg('a'), msg('[DONE]')]);
  });

  it('ignores blank lines with no data', async () => {
    assert.deepEqual(await parse(['\n\n\n', 'event: ping\n\n']), []);
  });
});
