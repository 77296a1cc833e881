// A small server-sent-events parser over a byte stream (WHATWG "event stream
// interpretation"), tolerant of what real upstreams send: \r\n or \r line ends,
// comment/keep-alive lines (": OPENROUTER PROCESSING"), multi-line data, events and
// even UTF-8 characters split across network chunks, and a last event that is not
// followed by a blank line.

export interface SseEvent {
  /** The `event:` field; 'message' when absent. */
  event: string;
  /** The `data:` lines joined with '\n'. */
  data: string;
}

export async function* parseSse(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8'); // streaming mode keeps split code points intact
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let first = true;

  // Returns the event to dispatch when `line` is blank, else records the field.
  const take = (line: string): SseEvent | undefined => {
    if (line === '') {
      const out = data.length > 0 ? { event: event || 'message', data: data.join('\n') } : undefined;
      data = [];
      event = '';
      return out;
    }
    if (line.startsWith(':')) return undefined; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    // `id` and `retry` mean nothing for a one-shot POST stream; other fields are ignored per spec.
    return undefined;
  };

  const drain = function* (final: boolean): Generator<SseEvent> {
    let start = 0;
    for (;;) {
      let end = -1;
      for (let i = start; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10 || c === 13) {
          end = i;
          break;
        }
      }
      if (end === -1) break;
      // A '\r' at the very end may be the first half of a '\r\n' split across chunks.
      if (buffer.charCodeAt(end) === 13 && end === buffer.length - 1 && !final) break;
      const line = buffer.slice(start, end);
      start = end + (buffer.charCodeAt(end) === 13 && buffer.charCodeAt(end + 1) === 10 ? 2 : 1);
      const ev = take(line);
      if (ev) yield ev;
    }
    buffer = buffer.slice(start);
  };

  for await (const chunk of bytes) {
    buffer += decoder.decode(chunk, { stream: true });
    if (first && buffer.length > 0) {
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1); // BOM
      first = false;
    }
    yield* drain(false);
  }
  buffer += decoder.decode();
  yield* drain(true);
  // Be lenient with a stream that ends without the closing blank line.
  if (buffer !== '') take(buffer);
  const last = take('');
  if (last) yield last;
}
