// Sends one HTTP/1.1 request over a raw TCP socket and parses the answer. Raw, so the
// fuzzer can send what fetch refuses to: control characters in headers, bad
// Content-Length and Transfer-Encoding, undecodable paths, invalid UTF-8 bodies.
import net from 'node:net';

export interface RawRequest {
  method: string;
  /** The request-target exactly as written on the request line (latin1). */
  target: string;
  /** Header lines, written in order (latin1, so any byte 0-255 can be sent); an empty name writes the value as the whole line. */
  headers: readonly (readonly [string, string])[];
  /** Leave out the Host header that is otherwise added. */
  noHost?: boolean;
  body: Buffer | null;
  /** Content-Length is added unless a header already frames the body or `frame` is 'none'. */
  frame?: 'content-length' | 'none';
  /** Half-close after writing, so a server waiting for more body sees the end at once. */
  endAfterWrite?: boolean;
}

interface RawResponse {
  status: number;
  /** lower-cased names; repeated headers joined with ', ' */
  headers: Record<string, string>;
  body: Buffer;
}

export type RawResult =
  | { kind: 'response'; response: RawResponse; ms: number }
  | { kind: 'closed'; error: string | null; received: number; ms: number }
  | { kind: 'timeout'; received: number; ms: number };

export function sendRaw(port: number, req: RawRequest, timeoutMs: number): Promise<RawResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const socket = net.connect({ port, host: '127.0.0.1' });
    const finish = (result: RawResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout', received, ms: performance.now() - started }), timeoutMs);
    const tryParse = (atEof: boolean) => {
      const parsed = parseResponse(Buffer.concat(chunks), atEof, req.method === 'HEAD');
      if (parsed) finish({ kind: 'response', response: parsed, ms: performance.now() - started });
      return parsed !== null;
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      tryParse(false);
    });
    socket.on('end', () => {
      if (!tryParse(true)) finish({ kind: 'closed', error: null, received, ms: performance.now() - started });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after a complete answer still counts as the answer.
      if (!tryParse(true)) finish({ kind: 'closed', error: err.code ?? err.message, received, ms: performance.now() - started });
    });
    socket.on('connect', () => {
      const lines = [`${req.method} ${req.target} HTTP/1.1`];
      const names = new Set(req.headers.map(([n]) => n.toLowerCase()));
      if (!names.has('host') && !req.noHost) lines.push(`Host: 127.0.0.1:${port}`);
      for (const [name, value] of req.headers) lines.push(name === '' ? value : `${name}: ${value}`);
      if (req.body && req.frame !== 'none' && !names.has('content-length') && !names.has('transfer-encoding')) {
        lines.push(`Content-Length: ${req.body.length}`);
      }
      if (!names.has('connection')) lines.push('Connection: close');
      const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
      // The server may answer and close before the whole body is written (a body over
      // the limit): a failed write is then expected, and the answer still counts.
      socket.write(req.body ? Buffer.concat([head, req.body]) : head, () => {
        if (req.endAfterWrite) socket.end();
      });
    });
  });
}

/** Parses a complete response from `buf`, or returns null when more bytes are needed. An answer to HEAD has no body. */
function parseResponse(buf: Buffer, atEof: boolean, bodiless: boolean): RawResponse | null {
  let offset = 0;
  // Skip interim 1xx answers (100 Continue).
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', offset);
    if (end < 0) return null;
    const lines = buf.subarray(offset, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!m) return atEof ? { status: 0, headers: {}, body: buf } : null;
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      offset = bodyStart;
      continue;
    }
    if (bodiless || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const body = dechunk(buf.subarray(bodyStart));
      if (body) return { status, headers, body };
      return atEof ? { status, headers, body: buf.subarray(bodyStart) } : null;
    }
    const length = headers['content-length'];
    if (length !== undefined) {
      const n = Number(length);
      if (buf.length - bodyStart >= n) return { status, headers, body: buf.subarray(bodyStart, bodyStart + n) };
      return atEof ? { status, headers, body: buf.subarray(bodyStart) } : null;
    }
    return atEof ? { status, headers, body: buf.subarray(bodyStart) } : null;
  }
}

function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', pos);
    if (lineEnd < 0) return null;
    const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    const dataStart = lineEnd + 2;
    if (size === 0) return buf.indexOf('\r\n', dataStart) >= 0 ? Buffer.concat(parts) : null;
    if (buf.length < dataStart + size + 2) return null;
    parts.push(buf.subarray(dataStart, dataStart + size));
    pos = dataStart + size + 2;
  }
}
