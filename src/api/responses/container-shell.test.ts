// The shell tool with a container environment, and skills mounted in containers, on the
// real bubblewrap sandbox with the official openai SDK and the offline engine: a
// shell_call and its shell_call_output with each command's exit code, a command stopped
// at its timeout, the streamed events checked against the reference; a skill mounted at
// /mnt/skills/<name>, readable, not writable, pinned to its version. Needs root and
// bubblewrap (CI).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { startTestServer, type TestServer } from '../../../test/helpers/test-server.ts';
import { checkStream } from './event-checks.test-support.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let server: TestServer;
let client: OpenAI;

before(async () => {
  if (skip) return;
  server = await startTestServer();
  client = server.openai((await server.createKey({ permissions: { code_interpreter: true, files: true, skills: true } })).key);
});
after(() => server?.close());

const bash = (...blocks: string[]) => `Run this:\n\n${blocks.map((b) => `\`\`\`bash\n${b}\n\`\`\`\n`).join('\n')}`;
const fenced = (code: string) => `Run this:\n\n\`\`\`python\n${code}\n\`\`\`\n`;

describe('shell in a container', { skip }, () => {
  test('each command runs with bash in the container: stdout, stderr and its exit code', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from('alpha\nbeta\n'), 'words.txt'), purpose: 'user_data' });
    const r = await client.responses.create({
      model: 'agent',
      input: bash('wc -l < words.txt', 'echo to-err >&2; exit 3'),
      tools: [{ type: 'shell', environment: { type: 'container_auto', file_ids: [file.id] } } as never],
    });
    assert.equal(r.status, 'completed');
    const call = r.output.find((i) => i.type === 'shell_call') as any;
    const output = r.output.find((i) => i.type === 'shell_call_output') as any;
    assert.ok(call && output, JSON.stringify(r.output));
    assert.deepEqual(call.action.commands, ['wc -l < words.txt', 'echo to-err >&2; exit 3']);
    assert.equal(call.environment.type, 'container_reference');
    assert.match(call.environment.container_id, /^cntr_/);
    assert.equal(output.call_id, call.call_id);
    assert.deepEqual(output.output, [
      { stdout: '2\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } },
      { stdout: '', stderr: 'to-err\n', outcome: { type: 'exit', exit_code: 3 } },
    ]);
    assert.match(r.output_text, /\b3\b/);
  });

  test('a command past its timeout_ms is stopped: outcome timeout; streamed events match the reference', async () => {
    const events: any[] = [];
    const stream = await client.responses.create({
      model: 'agent',
      input: `${bash('sleep 20')}\nUse a timeout of 700 ms.`,
      tools: [{ type: 'shell', environment: { type: 'container_auto' } } as never],
      stream: true,
    });
    for await (const e of stream) events.push(e);
    const final = checkStream(events);
    const call = final.output.find((i: any) => i.type === 'shell_call');
    assert.equal(call.action.timeout_ms, 700);
    const output = final.output.find((i: any) => i.type === 'shell_call_output');
    assert.deepEqual(output.output[0].outcome, { type: 'timeout' });
    const types = events.map((e) => e.type);
    for (const t of ['response.shell_call_command.added', 'response.shell_call_command.done', 'response.shell_call_output_content.delta', 'response.shell_call_output_content.done']) {
      assert.ok(types.includes(t), `${t} missing`);
    }
    assert.ok(types.indexOf('response.shell_call_command.done') < types.indexOf('response.shell_call_output_content.done'));
  });

  test('a named container (container_reference) and code_interpreter share its files', async () => {
    const c = await client.containers.create({ name: 'shared' });
    await client.responses.create({ model: 'agent', input: bash('echo hello > note.txt'), tools: [{ type: 'shell', environment: { type: 'container_reference', container_id: c.id } } as never] });
    const r = await client.responses.create({ model: 'agent', input: fenced("print(open('note.txt').read().strip())"), tools: [{ type: 'code_interpreter', container: c.id }] });
    assert.match(r.output_text, /hello/);
    await assert.rejects(
      client.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'shell', environment: { type: 'container_reference', container_id: 'cntr_nope' } } as never] }),
      (e: any) => e.status === 404 && e.param === 'tools[0].environment.container_id',
    );
  });
});

describe('skills in containers', { skip }, () => {
  const skillMd = (name: string, body: string) => `---\nname: ${name}\ndescription: Says hello.\n---\n\n${body}\n`;

  test('a skill is mounted at /mnt/skills/<name>: readable, not writable, pinned to its version', async () => {
    const skill = await client.skills.create({ files: [await toFile(Buffer.from(skillMd('greeter', 'version one')), 'SKILL.md'), await toFile(Buffer.from("print('hi from the skill')\n"), 'hello.py')] });
    const c = await client.containers.create({ name: 'with skill', skills: [{ type: 'skill_reference', skill_id: skill.id }] });
    // A newer version made the default after the container was made: the container keeps version 1.
    await client.skills.versions.create(skill.id, { files: [await toFile(Buffer.from(skillMd('greeter', 'version two')), 'SKILL.md')], default: true } as never);
    const code = [
      "import os",
      "print(sorted(os.listdir('/mnt/skills/greeter')))",
      "print(open('/mnt/skills/greeter/SKILL.md').read().splitlines()[-1])",
      "exec(open('/mnt/skills/greeter/hello.py').read())",
      "for target in ['/mnt/skills/greeter/SKILL.md', '/mnt/skills/greeter/new.txt']:",
      "    try:",
      "        open(target, 'w').write('changed')",
      "        print('WROTE', target)",
      "    except OSError as e:",
      "        print('refused', e.errno)",
    ].join('\n');
    const r = await client.responses.create({ model: 'agent', input: fenced(code), tools: [{ type: 'code_interpreter', container: c.id }], include: ['code_interpreter_call.outputs'] });
    const logs = (r.output.find((i) => i.type === 'code_interpreter_call') as any).outputs.map((o: any) => o.logs).join('');
    assert.match(logs, /\['SKILL\.md', 'hello\.py'\]/);
    assert.match(logs, /version one/);
    assert.match(logs, /hi from the skill/);
    assert.doesNotMatch(logs, /WROTE/);
    assert.equal((logs.match(/refused (13|30)/g) ?? []).length, 2, logs);

    // Through a shell container_auto with skills too; the default (version 2) now.
    const viaShell = await client.responses.create({
      model: 'agent',
      input: bash('tail -n 1 /mnt/skills/greeter/SKILL.md', 'touch /mnt/skills/greeter/x'),
      tools: [{ type: 'shell', environment: { type: 'container_auto', skills: [{ type: 'skill_reference', skill_id: skill.id }] } } as never],
    });
    const out = (viaShell.output.find((i) => i.type === 'shell_call_output') as any).output;
    assert.equal(out[0].stdout, 'version two\n');
    assert.notEqual(out[1].outcome.exit_code, 0);
  });

  test('unknown skills and versions, two skills of one name, and a key without the switch are refused', async () => {
    await assert.rejects(client.containers.create({ name: 'x', skills: [{ type: 'skill_reference', skill_id: 'skill_nope' }] }), (e: any) => e.status === 400 && e.param === 'skills[0].skill_id');
    const skill = await client.skills.create({ files: [await toFile(Buffer.from(skillMd('twin', 'one')), 'SKILL.md')] });
    const twin = await client.skills.create({ files: [await toFile(Buffer.from(skillMd('twin', 'two')), 'SKILL.md')] });
    await assert.rejects(client.containers.create({ name: 'x', skills: [{ type: 'skill_reference', skill_id: skill.id, version: '9' }] }), (e: any) => e.status === 400 && e.param === 'skills[0].version');
    await assert.rejects(
      client.containers.create({ name: 'x', skills: [{ type: 'skill_reference', skill_id: skill.id }, { type: 'skill_reference', skill_id: twin.id }] }),
      (e: any) => e.status === 400 && e.param === 'skills[1]',
    );
    // Refused before the model runs (nothing is charged), not at the first command.
    await assert.rejects(
      client.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'shell', environment: { type: 'container_auto', skills: [{ type: 'skill_reference', skill_id: 'skill_nope' }] } } as never] }),
      (e: any) => e.status === 400 && e.param === 'tools[0].environment.skills[0].skill_id',
    );
    await assert.rejects(
      client.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'shell', environment: { type: 'container_auto', skills: [{ type: 'inline', name: 'x' }] } } as never] }),
      (e: any) => e.status === 400 && e.param === 'tools[0].environment.skills[0].type',
    );
    const noSkills = server.openai((await server.createKey({ permissions: { code_interpreter: true } })).key);
    await assert.rejects(
      noSkills.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'shell', environment: { type: 'container_auto', skills: [{ type: 'skill_reference', skill_id: skill.id }] } } as never] }),
      (e: any) => e.status === 403 && e.param === 'tools[0].environment.skills[0]',
    );
  });
});
