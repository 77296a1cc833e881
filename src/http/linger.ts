// A response that goes out before its request body has arrived (a body over the size
// limit, a refused key) must still reach the client. Closing at once would reset the
// connection while the client is still uploading (the kernel answers unread data with
// a reset, which also discards our answer in the client's buffer), and the client would
// see a connection error (and retry) instead of the 4xx. So, as nginx's lingering close
// does, the rest of the body is read and discarded for a bounded time:
// - on a kept-alive connection, Node discards it; a client still sending after
//   LINGER_MS is cut off (lingerUntilBodyEnds);
// - on a connection that closes after this response (`Connection: close`), our side is
//   half-closed after the answer and the socket is destroyed only once the body has
//   ended, the client has closed, or LINGER_MS has passed (lingerOnClose).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

export const LINGER_MS = 10_000;

export function lingerUntilBodyEnds(request: IncomingMessage, lingerMs = LINGER_MS): void {
  if (request.complete || request.socket.destroyed) return;
  const socket = request.socket;
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  // Both listeners go with the timer: a kept-alive socket serves many requests.
  const stop = () => {
    clearTimeout(timer);
    request.off('end', stop);
    socket.off('close', stop);
  };
  request.once('end', stop);
  socket.once('close', stop);
  // Node discards the unread body once the response is done; make sure it flows.
  request.resume();
}

type NodeSocket = Socket & { destroySoon(): void };
const ORIGINAL = Symbol('destroySoon');

/**
 * Called for a request whose body is still arriving: should Node close the connection
 * after the response (it calls destroySoon) while this body is incomplete, the close
 * lingers instead. A later request on the same connection replaces the hook.
 */
export function lingerOnClose(request: IncomingMessage, lingerMs = LINGER_MS): void {
  const socket = request.socket as NodeSocket & { [ORIGINAL]?: () => void };
  const original = (socket[ORIGINAL] ??= socket.destroySoon);
  socket.destroySoon = function destroySoon(this: NodeSocket) {
    if (request.complete || this.destroyed) return original.call(this);
    this.end(); // our answer, then FIN; the client's data is still read
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      if (this.writableFinished) this.destroy();
      else this.once('finish', () => this.destroy());
    };
    request.once('end', done);
    this.once('end', done);
    this.once('close', () => clearTimeout(timer));
    request.resume();
  };
}
