// `mcp_servers` on the messages surface: a real @modelcontextprotocol/sdk server started
// here, which checks the token it was given; its tools run through the registry's MCP
// client in the one agent loop, shown as mcp_tool_use / mcp_tool_result blocks;
// tool_configuration filters them; a refused address is a 400 naming it; the MCP switch
// is needed; the token is in no table or log line afterwards.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeMcp, type FakeMcp } from '../../../test/helpers/fake-mcp.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const TOKEN = 'mcp-messages-token-canary-7c41d9';
let mcp: FakeMcp;
let mcpUrl: string;

const logs = new PassThrough();
const logLines: string[] = [];
logs.on('data', (d: Buffer) => logLines.push(d.toString()));
let server: TestServer;
let client: Anthropic;
before(async () => {
  mcp = await startFakeMcp(TOKEN);
  mcpUrl = mcp.url;
  server = await startTestServer({ AGENT_API_OUTBOUND_ALLOW: '127.0.0.1', LOG_LEVEL: 'debug' }, { logStream: logs } as never);
  const { key } = await server.createKey({ permissions: { mcp: true } });
  client = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(async () => {
  await server.close();
  mcp.close();
});

type Block = { type: string; [k: string]: any };
const servers = (extra: Record<string, unknown> = {}) => [{ type: 'url', url: mcpUrl, name: 'orders', authorization_token: TOKEN, ...extra }];

describe('mcp_servers', () => {
  test('a server tool runs once: mcp_tool_use and mcp_tool_result blocks, then the answer', async () => {
    const before = mcp.calls.length;
    const m = await client.beta.messages.create({ model: 'agent', max_tokens: 400, mcp_servers: servers({ tool_configuration: { allowed_tools: ['lookup_order'] } }) as never, messages: [{ role: 'user', content: 'Look up order 1234' }] });
    const blocks = m.content as Block[];
    const use = blocks.find((b) => b.type === 'mcp_tool_use');
    assert.ok(use, JSON.stringify(blocks));
    assert.equal(use.server_name, 'orders');
    assert.equal(use.name, 'lookup_order');
    assert.equal(use.input.order, '1234');
    const result = blocks.find((b) => b.type === 'mcp_tool_result')!;
    assert.equal(result.tool_use_id, use.id);
    assert.equal(result.is_error, false);
    assert.match(result.content[0].text, /Order 1234 has shipped/);
    assert.equal(mcp.calls.length - before, 1);
  });

  test('tool_configuration: a tool left out is not offered; a server disabled offers none', async () => {
    const before = mcp.calls.length;
    const m = await client.beta.messages.create({ model: 'agent', max_tokens: 200, mcp_servers: servers({ tool_configuration: { allowed_tools: ['cancel_order'] } }) as never, messages: [{ role: 'user', content: 'Look up order 77.' }] });
    assert.ok(!(m.content as Block[]).some((b) => b.type === 'mcp_tool_use' && b.name === 'lookup_order'));
    const off = await client.beta.messages.create({ model: 'agent', max_tokens: 200, mcp_servers: servers({ tool_configuration: { enabled: false } }) as never, messages: [{ role: 'user', content: 'Look up order 78.' }] });
    assert.ok(!(off.content as Block[]).some((b) => b.type === 'mcp_tool_use'));
    assert.equal(mcp.calls.filter((c, i) => i >= before && c.name === 'lookup_order').length, 0);
  });

  test('a private address is refused naming it; the MCP switch is needed', async () => {
    await assert.rejects(
      client.beta.messages.create({ model: 'agent', max_tokens: 50, mcp_servers: [{ type: 'url', url: 'https://10.0.0.1/mcp', name: 'inside' }] as never, messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => (e as { status?: number }).status === 400 && /mcp_servers\[0\]\.url/.test((e as Error).message),
    );
    const { key } = await server.createKey();
    const without = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await assert.rejects(without.beta.messages.create({ model: 'agent', max_tokens: 50, mcp_servers: servers() as never, messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => (e as { status?: number }).status === 403);
  });

  test('the token is in no log line', () => {
    assert.ok(logLines.length > 0);
    assert.ok(!logLines.some((l) => l.includes(TOKEN)));
  });
});
