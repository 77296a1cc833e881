// A response that goes out before its request body has arrived (a body over the size
// limit, a refused key) must still reach the client. Closing at once would reset the
// connection while the client is still uploading, and the client would see a
// connection error (and retry) instead of the 4xx. So the connection stays open and
// Node discards the rest of the body, as nginx's lingering close does, but only for a
// bounded time: a client still sending after that is cut off.
import type { IncomingMessage } from 'node:http';

export const LINGER_MS = 10_000;

export function lingerUntilBodyEnds(request: IncomingMessage, lingerMs = LINGER_MS): void {
  if (request.complete || request.socket.destroyed) return;
  const socket = request.socket;
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  const stop = () => clearTimeout(timer);
  request.once('end', stop);
  socket.once('close', stop);
  // Node discards the unread body once the response is done; make sure it flows.
  request.resume();
}
