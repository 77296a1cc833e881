// The code_execution server tool (code_execution_20250522) on the messages surface, on the
// real bubblewrap sandbox through the registry's code interpreter: a fenced Python block
// runs as written and its output comes back as a code_execution_tool_result; the answer
// names its container, which a later request reuses by `container`; the Code interpreter
// switch is needed; later tool versions and the vendor's skills are refused.
// Needs root and bubblewrap (CI).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let server: TestServer;
let client: Anthropic;
before(async () => {
  if (skip) return;
  server = await startTestServer({ AGENT_API_SANDBOX_TIMEOUT_MS: '8000' });
  const { key } = await server.createKey({ permissions: { function_calling: true, code_interpreter: true } });
  client = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
});
after(() => server?.close());

type Block = { type: string; [k: string]: any };
const tool = { type: 'code_execution_20250522' as const, name: 'code_execution' as const };
const fenced = (code: string) => `Run this:\n\n\`\`\`python\n${code}\n\`\`\`\n`;

describe('code_execution', { skip }, () => {
  test('a program runs in the sandbox; its output is the tool result; the container is named and reused', async () => {
    const m = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [tool], messages: [{ role: 'user', content: fenced("open('/mnt/data/n.txt','w').write('41')\nprint(6 * 7)") }] });
    const blocks = m.content as Block[];
    const use = blocks.find((b) => b.type === 'server_tool_use')!;
    assert.equal(use.name, 'code_execution');
    assert.match(use.input.code, /print\(6 \* 7\)/);
    const result = blocks.find((b) => b.type === 'code_execution_tool_result')!;
    assert.equal(result.tool_use_id, use.id);
    assert.equal(result.content.type, 'code_execution_result');
    assert.equal(result.content.stdout.trim(), '42');
    assert.equal(result.content.return_code, 0);
    const container = (m as unknown as { container: { id: string; expires_at: string } }).container;
    assert.match(container.id, /^cntr_/);
    assert.ok(Date.parse(container.expires_at) > Date.now());
    // The same container again: the file written before is there.
    const again = await client.messages.create({ model: 'agent', max_tokens: 500, tools: [tool], container: container.id, messages: [{ role: 'user', content: fenced("print(open('/mnt/data/n.txt').read())") }] } as never);
    const second = (again.content as Block[]).find((b) => b.type === 'code_execution_tool_result')!;
    assert.equal(second.content.stdout.trim(), '41');
  });

  test('the Code interpreter switch is needed; later versions and skills are refused', async () => {
    const { key } = await server.createKey({ permissions: { function_calling: true } });
    const without = new Anthropic({ apiKey: key, baseURL: `${server.origin}/api/messages`, maxRetries: 0 });
    await assert.rejects(without.messages.create({ model: 'agent', max_tokens: 50, tools: [tool], messages: [{ role: 'user', content: 'hi' }] }), (e: unknown) => (e as { status?: number }).status === 403);
    await assert.rejects(
      client.messages.create({ model: 'agent', max_tokens: 50, tools: [{ type: 'code_execution_20250825', name: 'code_execution' } as never], messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => (e as { status?: number }).status === 400 && /tools\[0\]\.type/.test((e as Error).message),
    );
    await assert.rejects(
      client.messages.create({ model: 'agent', max_tokens: 50, tools: [tool], container: { skills: [{ type: 'anthropic', skill_id: 'pptx' }] }, messages: [{ role: 'user', content: 'hi' }] } as never),
      (e: unknown) => (e as { status?: number }).status === 400 && /container\.skills/.test((e as Error).message),
    );
  });
});
