// Codex CLI against agent-api: a custom provider with wire_api = "responses", `-m agent`,
// its default features, `exec` asked to run echo with a word. The offline engine calls
// Codex's command tool, Codex runs it, sends the output back, and the final answer
// holds the word. Codex's request fields (store: false, include, reasoning.summary,
// client_metadata, ids on input messages, a namespace tool, web_search without external
// access) all pass the contract.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

const codex = path.resolve(import.meta.dirname, '../../../../node_modules/@openai/codex/bin/codex.js');

let server: TestServer;
let dir: string;
before(async () => {
  server = await startTestServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-codex-'));
});
after(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function runCodex(key: string, prompt: string, lastMessage: string): Promise<{ code: number | null; stderr: string }> {
  const home = path.join(dir, 'home');
  const work = path.join(dir, 'work');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(work, { recursive: true });
  const provider = `model_providers.local={name="local",base_url="${server.baseURL}",env_key="AGENT_API_KEY",wire_api="responses",stream_max_retries=0,request_max_retries=0}`;
  const child = spawn(
    process.execPath,
    [codex, 'exec', '--skip-git-repo-check', '-c', 'model_provider=local', '-c', provider, '-m', 'agent', '--dangerously-bypass-approvals-and-sandbox', '--output-last-message', lastMessage, prompt],
    { cwd: work, env: { ...process.env, HOME: home, AGENT_API_KEY: key, RUST_LOG: 'error' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  // A safety net only: a hung child is killed, never waited on forever.
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) => child.on('exit', (code) => (clearTimeout(timer), resolve({ code, stderr }))));
}

test('codex exec runs echo through the offline engine and answers with the word', async () => {
  const account = await server.createAccount(100);
  const { key } = await server.createKey({ account_id: account.id, permissions: { function_calling: true } });
  const lastMessage = path.join(dir, 'last.txt');
  const { code, stderr } = await runCodex(key, 'Run the shell command echo with the word PINEAPPLE and tell me its output.', lastMessage);
  assert.equal(code, 0, stderr.slice(-2000));
  assert.match(fs.readFileSync(lastMessage, 'utf8'), /PINEAPPLE/);
  // The tool round trip: a call that asked for the command, then one with its output.
  const activity = await server.admin('GET', `/activity?account_id=${account.id}&limit=20`);
  const rows = (activity.body.data as { endpoint: string; status: number }[]).filter((r) => r.endpoint === '/v1/responses');
  assert.ok(rows.length >= 2, JSON.stringify(rows));
  assert.ok(rows.every((r) => r.status === 200));
});
