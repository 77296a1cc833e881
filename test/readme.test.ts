// The README's quick start, run as written against a fresh `npm start`: the code blocks are
// read out of README.md, so this test breaks when the README drifts from what the service
// does. Only the printed key and token and the port are substituted (PORT=0: the test picks
// no fixed port); the environment names the fresh data dir (and, on the PostgreSQL pass, the
// database). `npm install` is not run again: the suite runs from an installed tree.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { bannerSecrets, ROOT, startServerProcess, userEnv } from './helpers/server-process.ts';
import { scratchDatabase } from './helpers/test-server.ts';

const run = promisify(execFile);

function quickStartBlocks(): { lang: string; body: string }[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start\n');
  assert.ok(start >= 0, 'README.md has a "Quick start" section');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}

/** Shell commands of a block: continuation lines joined, comment lines dropped. */
const commands = (body: string) =>
  body
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test("the README's quick start works as written", async () => {
  const [start, banner, shell, js, ...rest] = quickStartBlocks();
  assert.deepEqual([start?.lang, banner?.lang, shell?.lang, js?.lang, rest.length], ['sh', 'text', 'sh', 'js', 0], 'the blocks the quick start is made of');
  assert.equal(start!.body.trim(), 'npm install && npm start');

  const scratch = await scratchDatabase();
  const dbEnv = { DATA_DIR: scratch.dir, ...(process.env.TEST_DATABASE === 'postgres' ? { DATABASE_URL: scratch.url } : {}) };
  const server = await startServerProcess(userEnv({ PORT: '0', ...dbEnv }), ['npm', 'start']);
  try {
    // The banner as the README shows it, `...` standing for the secrets.
    const { stderr } = await server.waitForOutput((o) => /Admin token: /.test(o.stderr), 'the banner');
    for (const line of banner!.body.split('\n').filter((l) => l.trim())) {
      assert.match(stderr, new RegExp(`^${escape(line.trimEnd()).replace(/\\\.\\\.\\\./g, '\\S+')}$`, 'm'), `README banner line: ${line}`);
    }
    const { apiKey, adminToken } = bannerSecrets(stderr);
    assert.ok(apiKey && adminToken);
    const port = new URL(server.origin).port;
    const substitute = (text: string) =>
      text.replaceAll('sk-agent-...', apiKey).replaceAll('agent-admin-...', adminToken).replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);

    // The shell steps, one by one in one shell (the exports carry over); each must exit 0
    // and none may answer with an error object.
    const steps = commands(shell!.body).map(substitute);
    const script = ['set -e', ...steps.flatMap((cmd, i) => [`echo "@@step ${i}"`, cmd, 'echo'])].join('\n');
    const { stdout } = await run('bash', ['-c', script], { cwd: ROOT, env: userEnv(dbEnv) }).catch((err: { stdout: string; stderr: string }) =>
      assert.fail(`a quick-start step failed:\n${err.stdout}\n${err.stderr}`),
    );
    const outputs = stdout.split(/^@@step \d+\n/m).slice(1);
    assert.equal(outputs.length, steps.length);
    steps.forEach((cmd, i) => {
      const out = outputs[i]!.trim();
      if (!out) return;
      const body = JSON.parse(out) as { error?: unknown };
      assert.equal(body.error, undefined, `${cmd}\n${out}`);
    });
    const chat = JSON.parse(outputs[steps.findIndex((c) => c.includes('/v1/chat/completions'))]!) as { object: string };
    assert.equal(chat.object, 'chat.completion');
    const last = JSON.parse(outputs.at(-1)!) as { name: string; credits: number };
    assert.equal(last.name, 'default');
    assert.ok(last.credits > 299 && last.credits < 300, `100 starting credits, plus 100 twice, less two requests: ${last.credits}`);

    // The SDK example, with the key exported as the shell step says.
    const sdk = await run(process.execPath, ['--input-type=module', '-e', substitute(js!.body)], { cwd: ROOT, env: userEnv({ AGENT_API_KEY: apiKey }) });
    assert.match(sdk.stdout, /agent-think/);
    assert.match(sdk.stdout, /84/);
  } finally {
    await server.stop();
    await scratch.cleanup();
  }
});
