// Test support for following a background response: an upstream that streams words until
// the test releases it (so a test knows the response is still running when it reads),
// and an SSE reader that hands over events one at a time and can stop mid-stream.
import { setTimeout as pause } from 'node:timers/promises';
import { startFakeUpstream, type FakeUpstream } from '../../providers/remote/openai-compatible/fake-upstream.test-support.ts';

export interface GatedUpstream extends FakeUpstream {
  /** Lets the streams under way finish (a stop chunk, then [DONE]). */
  release(): void;
  /** When each word went out (ms, performance.now()), by word. */
  sentAt: Map<string, number>;
}

/** A chat stream of `word0 word1 ...`, one every `everyMs`, until released. */
export async function gatedUpstream(everyMs = 20): Promise<GatedUpstream> {
  let released = false;
  const sentAt = new Map<string, number>();
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const upstream = await startFakeUpstream(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < 5000 && !released && !res.destroyed; i++) {
      const word = `word${i}`;
      sentAt.set(word, performance.now());
      res.write(chunk({ content: `${word} ` }, null));
      await pause(everyMs);
    }
    if (res.destroyed) return;
    res.write(chunk({}, 'stop'));
    res.end('data: [DONE]\n\n');
  });
  return Object.assign(upstream, { release: () => void (released = true), sentAt });
}

export type Ev = Record<string, any> & { type: string; sequence_number: number };

/** Reads an SSE response event by event. */
export class SseReader {
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** The next event; undefined when the stream ended. */
  async next(): Promise<Ev | undefined> {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (data) return JSON.parse(data.slice(6)) as Ev;
        continue;
      }
      const { value, done } = await this.reader.read();
      if (done) return undefined;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** Events until `stop` holds for one (included), or the end. */
  async until(stop: (e: Ev) => boolean): Promise<Ev[]> {
    const out: Ev[] = [];
    for (let e = await this.next(); e; e = await this.next()) {
      out.push(e);
      if (stop(e)) break;
    }
    return out;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}
