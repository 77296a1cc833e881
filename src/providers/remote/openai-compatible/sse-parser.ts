// A small server-sent-events parser (WHATWG "event stream interpretation"), fed
// chunk by chunk, tolerant of what real upstreams send: \r\n or \r line ends,
// comment/keep-alive lines (": OPENROUTER PROCESSING"), multi-line data, events and
// even UTF-8 characters split across network chunks, and a last event that is not
// followed by a blank line. It is a push parser (chunk in, events out, synchronously)
// rather than an async generator: a stream carries an event per token, and a layer of
// promises per event is measurable on the proxy path.

export interface SseEvent {
  /** The `event:` field; 'message' when absent. */
  event: string;
  /** The `data:` lines joined with '\n'. */
  data: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8'); // streaming mode keeps split code points intact
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private first = true;

  /** The events completed by `chunk`. */
  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    if (this.first && this.buffer.length > 0) {
      if (this.buffer.charCodeAt(0) === 0xfeff) this.buffer = this.buffer.slice(1); // BOM
      this.first = false;
    }
    const out: SseEvent[] = [];
    this.drain(false, out);
    return out;
  }

  /** The events still pending when the stream ends. */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode();
    const out: SseEvent[] = [];
    this.drain(true, out);
    // Be lenient with a stream that ends without the closing blank line.
    if (this.buffer !== '') this.take(this.buffer);
    this.buffer = '';
    const last = this.take('');
    if (last) out.push(last);
    return out;
  }

  // Returns the event to dispatch when `line` is blank, else records the field.
  private take(line: string): SseEvent | undefined {
    if (line === '') {
      const out = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n') } : undefined;
      this.data = [];
      this.event = '';
      return out;
    }
    if (line.charCodeAt(0) === 58 /* : */) return undefined; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    // `id` and `retry` mean nothing for a one-shot POST stream; other fields are ignored per spec.
    return undefined;
  }

  private drain(final: boolean, out: SseEvent[]): void {
    const buffer = this.buffer;
    let start = 0;
    // Where the next '\r' and '\n' are (indexOf, not a character loop: lines carry whole
    // JSON chunks); each is searched again only once passed.
    let cr = buffer.indexOf('\r');
    let lf = buffer.indexOf('\n');
    for (;;) {
      if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start);
      if (lf !== -1 && lf < start) lf = buffer.indexOf('\n', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      // A '\r' at the very end may be the first half of a '\r\n' split across chunks.
      if (end === cr && end === buffer.length - 1 && !final) break;
      const line = buffer.slice(start, end);
      start = end + (end === cr && lf === end + 1 ? 2 : 1);
      const ev = this.take(line);
      if (ev) out.push(ev);
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start);
  }
}
