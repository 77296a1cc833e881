// Where a hung server is stuck: the child runs with the inspector on a loopback port,
// and Debugger.pause, served by the inspector's own thread, stops even a loop that never
// yields; the paused call frames are the answer. A thread blocked in native code (a
// lock wait, a synchronous syscall) only pauses once it returns, so no answer within
// the wait says that much.
import { WebSocket } from 'undici';

interface CallFrame {
  functionName: string;
  location: { scriptId: string };
}

export async function stackOf(inspectorUrl: string, waitMs = 2_000): Promise<string[]> {
  const ws = new WebSocket(inspectorUrl);
  try {
    return await new Promise<string[]>((resolve) => {
      const timer = setTimeout(() => resolve([`(did not pause within ${waitMs} ms: blocked outside JavaScript, e.g. in a native call)`]), waitMs);
      ws.addEventListener('open', () => {
        ws.send(JSON.stringify({ id: 1, method: 'Debugger.enable' }));
        ws.send(JSON.stringify({ id: 2, method: 'Debugger.pause' }));
      });
      // Debugger.enable announces every script; the paused frames name them by id.
      const scripts = new Map<string, string>();
      ws.addEventListener('message', (event) => {
        const msg = JSON.parse(String(event.data)) as { method?: string; params?: { callFrames: CallFrame[]; scriptId: string; url: string } };
        if (msg.method === 'Debugger.scriptParsed') scripts.set(msg.params!.scriptId, msg.params!.url);
        if (msg.method !== 'Debugger.paused') return;
        clearTimeout(timer);
        const where = (f: CallFrame) => (scripts.get(f.location.scriptId) ?? '?').replace(/^file:\/\/.*?\/(src|test|node_modules)\//, '$1/').replace(/\?.*$/, '');
        // Function and file: line numbers would be those of the code tsx compiled.
        resolve(msg.params!.callFrames.slice(0, 12).map((f) => `${f.functionName || '(anonymous)'} (${where(f)})`));
      });
      ws.addEventListener('error', () => {
        clearTimeout(timer);
        resolve(['(the inspector did not answer)']);
      });
    });
  } finally {
    ws.close();
  }
}
