// Reads a copy of what the upstream aggregator answers, as it passes through to the
// client unchanged, for what settling the call needs: the generation id, the model, the
// usage with its reported cost, and how the answer ended. A stream is read event by
// event (the final chunk carries usage); a JSON body is kept whole only when small, and
// otherwise only its head (where `id` and `model` are) and its tail (where `usage` is),
// so a large answer (embeddings) costs no full parse on the event loop.
import { LARGE_JSON_BYTES } from '../../pipeline/json/text.ts';
import { SseParser } from '../../providers/remote/openai-compatible/sse-parser.ts';

export interface SeenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Dollars, when the upstream reported the cost. */
  cost: number | null;
}

/** Bytes of a large JSON answer's head and tail kept to find its fields. */
const EDGE_BYTES = 64 * 1024;

export class UsageTee {
  id: string | null = null;
  model: string | null = null;
  usage: SeenUsage | null = null;
  finishReason: string | null = null;
  /** The upstream reported an error inside a 200 answer (a mid-stream error event). */
  failed = false;
  /** Bytes of the body seen. */
  bytes = 0;
  private readonly sse: SseParser | null;
  private chunks: Buffer[] = [];
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private head = '';

  constructor(contentType: string | undefined) {
    this.sse = contentType?.startsWith('text/event-stream') ? new SseParser() : null;
  }

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.sse) {
      for (const e of this.sse.push(chunk)) this.event(e.data);
      return;
    }
    if (this.chunks !== null && this.bytes <= LARGE_JSON_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    // Past the size parsed whole: keep the head for id/model and a rolling tail for usage.
    if (this.head === '') this.head = Buffer.concat([...this.chunks, chunk]).subarray(0, EDGE_BYTES).toString('utf8');
    this.tail.push(...this.chunks, chunk);
    this.chunks = [];
    this.tailBytes += chunk.length;
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= EDGE_BYTES) this.tailBytes -= this.tail.shift()!.length;
  }

  /** The body is complete. */
  end(): void {
    if (this.sse) {
      for (const e of this.sse.end()) this.event(e.data);
      return;
    }
    if (this.head === '') {
      this.read(parse(Buffer.concat(this.chunks).toString('utf8')));
      this.chunks = [];
      return;
    }
    this.id = field(this.head, 'id');
    this.model = field(this.head, 'model');
    const tail = Buffer.concat(this.tail).toString('utf8');
    const at = tail.lastIndexOf('"usage"');
    if (at >= 0) this.readUsage(parse(objectFrom(tail, tail.indexOf('{', at))));
  }

  private event(data: string): void {
    if (data === '[DONE]' || data === '') return;
    this.read(parse(data));
  }

  private read(body: any): void {
    if (typeof body !== 'object' || body === null) return;
    if (this.id === null && typeof body.id === 'string') this.id = body.id;
    if (this.model === null && typeof body.model === 'string') this.model = body.model;
    if (body.error !== undefined && body.error !== null) this.failed = true;
    if (Array.isArray(body.choices)) {
      for (const c of body.choices) if (typeof c?.finish_reason === 'string') this.finishReason = c.finish_reason;
    }
    if (body.usage) this.readUsage(body.usage);
  }

  private readUsage(usage: any): void {
    if (typeof usage !== 'object' || usage === null) return;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
    const cost = typeof usage.cost === 'number' && Number.isFinite(usage.cost) && usage.cost >= 0 ? usage.cost : null;
    this.usage = { promptTokens: Math.round(n(usage.prompt_tokens)), completionTokens: Math.round(n(usage.completion_tokens)), cost };
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A top-level string field near the start of a JSON text (`"id":"gen-..."`). */
function field(text: string, name: string): string | null {
  const m = new RegExp(`"${name}"\\s*:\\s*"((?:[^"\\\\]|\\\\.){0,512})"`).exec(text);
  return m ? (parse(`"${m[1]}"`) as string | null) : null;
}

/** The JSON object text starting at `start` (a `{`), by matching braces outside strings; '' when it does not close. */
function objectFrom(text: string, start: number): string {
  if (start < 0) return '';
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return text.slice(start, i + 1);
  }
  return '';
}
