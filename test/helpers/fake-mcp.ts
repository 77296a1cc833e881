// A real @modelcontextprotocol/sdk server over Streamable HTTP for tests of the MCP
// client: an orders service (lookup_order, cancel_order, refund_payment, the last one
// failing) that answers only requests carrying the token (and header, if given) it was
// made with, and keeps every tools/call and the number of tools/list it got.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface FakeMcp {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  calls: { name: string; arguments: unknown; authorization?: string; header?: string }[];
  lists: number;
  close(): void;
}

function ordersServer(): McpServer {
  const s = new McpServer({ name: 'orders', version: '1.0.0' });
  s.registerTool('lookup_order', { description: 'Looks up an order by its number.', inputSchema: { order: z.string() }, annotations: { readOnlyHint: true } }, async ({ order }) => ({
    content: [{ type: 'text', text: `Order ${order} has shipped.` }],
  }));
  s.registerTool('cancel_order', { description: 'Cancels an order by its number.', inputSchema: { order: z.string() } }, async ({ order }) => ({
    content: [{ type: 'text', text: `Order ${order} is cancelled.` }],
  }));
  s.registerTool('refund_payment', { description: 'Refunds a payment.', inputSchema: { payment: z.string() } }, async () => ({
    content: [{ type: 'text', text: 'The payment service is down.' }],
    isError: true,
  }));
  return s;
}

/** `header`: a [name, value] the server also requires. */
export async function startFakeMcp(token: string, header?: [string, string]): Promise<FakeMcp> {
  const fake: FakeMcp = { url: '', calls: [], lists: 0, close: () => server.close() };
  const server = http.createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}` || (header && req.headers[header[0]] !== header[1])) return res.writeHead(401).end('no');
    if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    // The SDK's transport reads the body it is handed, and this raw copy.
    (req as { rawBody?: Buffer }).rawBody = raw;
    const body = JSON.parse(raw.toString());
    for (const m of [body].flat() as { method?: string; params?: { name: string; arguments: unknown } }[]) {
      if (m.method === 'tools/call') {
        fake.calls.push({ name: m.params!.name, arguments: m.params!.arguments, authorization: req.headers.authorization, ...(header ? { header: req.headers[header[0]] as string } : {}) });
      }
      if (m.method === 'tools/list') fake.lists++;
    }
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await ordersServer().connect(t);
    res.on('close', () => void t.close());
    await t.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return fake;
}
