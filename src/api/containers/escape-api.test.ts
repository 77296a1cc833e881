// The escape suite's attacks through the API, with the official openai SDK on the real
// sandbox (src/sandbox/escape.test.ts holds the ones on the sandbox itself): another
// account's container is unreachable by id at every container endpoint, as a tool's
// container, or through an earlier response; code the service runs cannot read its
// database, DATA_DIR or the sandbox root. Prints how many attacks it tried and that all
// held. Needs root and bubblewrap (CI).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { toFile } from 'openai';
import { startTestServer } from '../../../test/helpers/test-server.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let attacks = 0;
let held = 0;

/** One attack: `attempt` must show the service held. */
async function attack(name: string, attempt: () => Promise<void>): Promise<void> {
  attacks++;
  await attempt();
  held++;
  void name;
}

after(() => {
  if (!skip) console.log(`escape suite (through the API): ${attacks} attacks tried, ${held} held${attacks === held ? ' (all)' : ''}`);
});

test('through the API: another account\'s container is unreachable by id; code run by the service cannot read its data', { skip }, async () => {
  const server = await startTestServer();
  try {
    const permissions = { code_interpreter: true, files: true, skills: true };
    const mine = server.openai((await server.createKey({ permissions })).key);
    const theirs = server.openai((await server.createKey({ permissions })).key);
    const c = await mine.containers.create({ name: 'private' });
    const f = await mine.containers.files.create(c.id, { file: await toFile(Buffer.from('mine only'), 'secret.txt') });
    const notFound = (p: Promise<unknown>) => assert.rejects(p, (e: any) => e.status === 404);
    await attack('another account: container by id', async () => {
      await notFound(theirs.containers.retrieve(c.id));
      await notFound(theirs.containers.files.list(c.id));
      await notFound(theirs.containers.files.retrieve(f.id, { container_id: c.id }));
      await notFound(theirs.containers.files.content.retrieve(f.id, { container_id: c.id }));
      await notFound(theirs.containers.files.create(c.id, { file: await toFile(Buffer.from('x'), 'x.txt') }));
      await notFound(theirs.containers.files.delete(f.id, { container_id: c.id }));
      await notFound(theirs.containers.delete(c.id));
    });
    await attack('another account: container as a tool\'s container', async () => {
      await notFound(theirs.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'code_interpreter', container: c.id }] }));
      await notFound(theirs.responses.create({ model: 'agent', input: 'hi', tools: [{ type: 'shell', environment: { type: 'container_reference', container_id: c.id } } as never] }));
    });
    await attack('another account: an earlier response\'s auto container', async () => {
      const r = await mine.responses.create({ model: 'agent', input: 'Run this:\n```python\nprint(1)\n```', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] });
      const used = (r.output.find((i) => i.type === 'code_interpreter_call') as any).container_id as string;
      await notFound(theirs.containers.retrieve(used));
      // Their own continuation of a response id they do not own is refused too.
      await notFound(theirs.responses.create({ model: 'agent', previous_response_id: r.id, input: 'again', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }));
    });
    await attack('code run by the service reads neither its database nor DATA_DIR', async () => {
      const dataDir = server.config.dataDir;
      // Where containers live here: the configured root, or the one the service chose instead.
      const sandboxRoot = (await server.app.containers.status()).root ?? server.config.sandboxDir;
      const code = [
        'import os',
        `for p in [${JSON.stringify(path.join(dataDir, 'agent-api.sqlite'))}, ${JSON.stringify(dataDir)}, ${JSON.stringify(sandboxRoot)}]:`,
        '    try:',
        '        print("READ", p, os.listdir(p) if os.path.isdir(p) else len(open(p, "rb").read()))',
        '    except OSError as e:',
        '        print("refused", e.errno)',
      ].join('\n');
      const r = await mine.responses.create({ model: 'agent', input: `Run this:\n\`\`\`python\n${code}\n\`\`\``, tools: [{ type: 'code_interpreter', container: c.id }], include: ['code_interpreter_call.outputs'] });
      const logs = (r.output.find((i) => i.type === 'code_interpreter_call') as any).outputs.map((o: any) => o.logs).join('');
      assert.doesNotMatch(logs, /READ/);
      assert.equal((logs.match(/refused 2\b/g) ?? []).length, 3, logs);
    });
  } finally {
    await server.close();
  }
});
