// What the service adds around the assistant's tools (issue 20), at concurrency 1, the
// server a child process on the offline engine:
//   1. a remote MCP call with require_approval never: a POST /v1/responses that lists the
//      server's tools and makes one call, against the same work done directly with the
//      MCP SDK's client (connect, list the tools, call the tool, close), both to a real
//      SDK server started here (stateless, JSON answers);
//   2. a one-search response: a POST /v1/responses with the web_search tool that searches
//      once, against the search backend's own time (a GET of its /search, the fake
//      SearxNG started here).
// Each pair taken in turns, after a warm-up; prints p50/p90 of each and the added time.
//
//   npm run bench:agent-tools   (BENCH_REQUESTS, default 200)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { freePort, percentile, startChild, stopChild, timedPost, serverArgs } from './lib.ts';

const requests = Number(process.env.BENCH_REQUESTS ?? 200);
const root = path.resolve(import.meta.dirname, '..');
const key = 'sk-agent-bench-0123456789abcdefghijklmnop';

function mcpTools(): McpServer {
  const s = new McpServer({ name: 'bench', version: '1.0.0' });
  s.registerTool('lookup_order', { description: 'Looks up an order by its number.', inputSchema: { order: z.string() } }, async ({ order }) => ({ content: [{ type: 'text', text: `Order ${order} has shipped.` }] }));
  return s;
}

const listen = async (server: http.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

const mcpServer = http.createServer(async (req, res) => {
  if (req.method !== 'POST') return res.writeHead(405).end();
  const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await mcpTools().connect(t);
  res.on('close', () => void t.close());
  await t.handleRequest(req, res);
});
const mcpUrl = `http://127.0.0.1:${await listen(mcpServer)}/mcp`;

let searchBase = '';
const searchServer = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ results: [1, 2, 3, 4, 5].map((n) => ({ url: `https://example.org/page${n}`, title: `Result ${n}`, content: `The ${n}th page about trains crossing rivers.` })) }));
});
searchBase = `http://127.0.0.1:${await listen(searchServer)}`;

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const post = (port: number, body: unknown) => timedPost(port, '/v1/responses', body, { agent, key });

async function directMcp(): Promise<number> {
  const t0 = performance.now();
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl));
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: 'lookup_order', arguments: { order: '42' } });
  await transport.terminateSession().catch(() => undefined);
  await client.close();
  return performance.now() - t0;
}

async function directSearch(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${searchBase}/search?q=trains&format=json`);
  await res.json();
  return performance.now() - t0;
}

const summary = (name: string, ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { name, p50: percentile(s, 50), p90: percentile(s, 90) };
};
const line = (f: { name: string; p50: number; p90: number }) => `  ${f.name.padEnd(58)} p50 ${f.p50.toFixed(2).padStart(7)} ms   p90 ${f.p90.toFixed(2).padStart(7)} ms`;

const port = await freePort();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-bench-tools-'));
const api = await startChild(
  serverArgs(root),
  {
    PORT: String(port),
    DATA_DIR: dataDir,
    AGENT_API_BOOTSTRAP_KEY: key,
    AGENT_API_ADMIN_TOKEN: 'bench-admin-token-0123456789',
    AGENT_API_BOOTSTRAP_CREDITS: '1000000',
    AGENT_API_MAX_RPM: '100000000',
    AGENT_API_OUTBOUND_ALLOW: '127.0.0.1',
    WEB_SEARCH_BACKEND: 'searxng',
    WEB_SEARCH_URL: searchBase,
    LOG_LEVEL: 'warn',
  },
  `http://127.0.0.1:${port}/healthz`,
  30_000,
);
try {
  const mcpBody = { model: 'agent', input: 'Look up order 42', store: false, parallel_tool_calls: false, tools: [{ type: 'mcp', server_label: 'orders', server_url: mcpUrl, require_approval: 'never' }] };
  const searchBody = { model: 'agent', input: 'Search the web for trains', store: false, tools: [{ type: 'web_search' }] };
  for (let i = 0; i < 20; i++) {
    await post(port, mcpBody);
    await directMcp();
    await post(port, searchBody);
    await directSearch();
  }
  const times = { mcp: [] as number[], sdk: [] as number[], search: [] as number[], backend: [] as number[] };
  for (let i = 0; i < requests; i++) {
    times.mcp.push(await post(port, mcpBody));
    times.sdk.push(await directMcp());
    times.search.push(await post(port, searchBody));
    times.backend.push(await directSearch());
  }
  const mcp = summary('Responses with one never-approval MCP call (list + call)', times.mcp);
  const sdk = summary('the same list + call made directly with the MCP SDK', times.sdk);
  const search = summary('Responses with one web search', times.search);
  const backend = summary("the search backend's own time (GET /search)", times.backend);
  console.log(`agent tools, ${requests} requests each, concurrency 1, offline engine (${os.cpus().length} cores)`);
  console.log(line(mcp));
  console.log(line(sdk));
  console.log(`  added by the service: p50 ${(mcp.p50 - sdk.p50).toFixed(2)} ms, p90 ${(mcp.p90 - sdk.p90).toFixed(2)} ms`);
  console.log(line(search));
  console.log(line(backend));
  console.log(`  added by the service: p50 ${(search.p50 - backend.p50).toFixed(2)} ms, p90 ${(search.p90 - backend.p90).toFixed(2)} ms`);
} finally {
  await stopChild(api);
  mcpServer.close();
  searchServer.close();
  agent.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
