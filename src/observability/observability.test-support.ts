// Test support only: a fake upstream that answers chat like a small model (or fails
// on request), log lines captured from a running app, and Prometheus text parsing.
import { setTimeout as delay } from 'node:timers/promises';
import { startFakeUpstream, type FakeUpstream } from '../providers/remote/openai-compatible/fake-upstream.test-support.ts';

export const UPSTREAM_KEY = 'sk-upstream-secret-4242';
/** Usage the fake upstream reports for every answer. */
export const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };

export interface ChatUpstream extends FakeUpstream {
  /** Streams hold after their first chunk until this is called. */
  hold(): () => void;
}

/** A chat answer of "Paris." with USAGE; a message containing FAIL gets a 500. */
export async function startChatUpstream(): Promise<ChatUpstream> {
  let gate: Promise<void> | undefined;
  const up = await startFakeUpstream(async (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'upstream-small', object: 'model' }] }));
      return;
    }
    if (JSON.stringify(req.body.messages ?? '').includes('FAIL')) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'upstream exploded' } }));
      return;
    }
    const base = { id: 'chatcmpl-up', created: 1, model: 'upstream-small' };
    if (req.body.stream === false) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }], usage: USAGE }));
      return;
    }
    const chunk = (choices: unknown[], usage: unknown = null) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, usage })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: 'Par' }, finish_reason: null }]));
    await gate;
    res.write(chunk([{ index: 0, delta: { content: 'is.' }, finish_reason: 'stop' }]));
    res.end(chunk([], USAGE) + 'data: [DONE]\n\n');
  });
  return {
    ...up,
    hold() {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

export function upstreamEnv(up: FakeUpstream): Record<string, string> {
  return {
    UPSTREAM_BASE_URL: up.baseUrl,
    UPSTREAM_API_KEY: UPSTREAM_KEY,
    UPSTREAM_MODEL_AGENT: 'upstream-small',
    UPSTREAM_PRICE_INPUT_PER_MTOK: '1',
    UPSTREAM_PRICE_OUTPUT_PER_MTOK: '2',
    UPSTREAM_MAX_RETRIES: '0',
  };
}

/** A pino destination that keeps what the app logs. */
export class CapturedLog {
  text = '';
  write(chunk: string): void {
    this.text += chunk;
  }
  get records(): Record<string, unknown>[] {
    return this.text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
  /** Waits (polling) for a record that matches; the finish step logs after the response went out. */
  async find(match: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (let i = 0; i < 400; i++) {
      const found = this.records.find(match);
      if (found) return found;
      await delay(5);
    }
    throw new Error(`no matching log line in:\n${this.text}`);
  }
}

/** The value of one sample of Prometheus text, matched by name and a subset of labels; undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}
