// Claude Code 2.1.328 (the native binary of @anthropic-ai/claude-code-linux-x64, an
// optional dependency: the wrapper package declares Node 22, the binary needs no Node) against the
// messages surface, unchanged: `ANTHROPIC_BASE_URL` at this root and the key in
// `ANTHROPIC_API_KEY`. Asked in -p mode to run `echo` with a word, the offline engine
// calls its Bash tool, Claude Code runs it and sends the result back, and the final
// answer contains the word. Its requests carry what its traffic does (adaptive thinking
// with display omitted, context_management, output_config.effort, max_tokens 128000,
// cache_control on system blocks and tool results, role "system" turns, a deferred
// tool), so this also proves the contract lets them through.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../../test/helpers/test-server.ts';

const CLAUDE = path.resolve(import.meta.dirname, '../../../../node_modules/@anthropic-ai/claude-code-linux-x64/claude');
/** Its binary is for Linux x64 (glibc) only: elsewhere npm leaves the optional package out. */
const skip = fs.existsSync(CLAUDE) ? false : 'Claude Code\'s native binary (@anthropic-ai/claude-code-linux-x64) is not installed on this platform';

let server: TestServer;
let home: string;
before(async () => {
  if (skip) return;
  server = await startTestServer();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-code-home-'));
});
after(async () => {
  if (skip) return;
  await server.close();
  fs.rmSync(home, { recursive: true, force: true });
});

function claude(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(CLAUDE, args, { env, cwd: home, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('claude -p runs echo through its Bash tool and answers with the word', { timeout: 300_000, skip }, async () => {
  const { key, id } = await server.createKey({ permissions: { function_calling: true } });
  const env: Record<string, string> = {
    HOME: home,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ANTHROPIC_BASE_URL: `${server.origin}/api/messages`,
    ANTHROPIC_API_KEY: key,
    // No traffic but the model's: no telemetry, updates or other side requests.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    // It refuses --dangerously-skip-permissions as root (CI runs as root) unless told it is sandboxed.
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: '1' } : {}),
  };
  const run = await claude(['-p', 'Run the shell command: echo pineapple. Then tell me what it printed.', '--dangerously-skip-permissions', '--output-format', 'json'], env);
  assert.equal(run.code, 0, `claude exited ${run.code}: ${run.stderr.slice(0, 2000)} ${run.stdout.slice(0, 2000)}`);
  const result = JSON.parse(run.stdout) as { result: string; is_error: boolean; num_turns: number };
  assert.equal(result.is_error, false);
  assert.match(result.result, /pineapple/);
  // Two turns on this surface: the tool call, then the answer after its result.
  const activity = await server.fetch(`/admin/v1/activity?key_id=${id}`, { headers: { authorization: 'Bearer test-admin-token-0123456789' } });
  const rows = ((await activity.json()) as { data: { endpoint: string; status: number }[] }).data;
  assert.ok(rows.length >= 2, JSON.stringify(rows));
  assert.ok(rows.every((r) => r.endpoint === '/api/messages/v1/messages' && r.status === 200), JSON.stringify(rows));
});
