// The escape suite: programs that try to get out of a container, each asserting that the
// sandbox held. Network (loopback, the host's address, DNS), reads of the service's data,
// another container, /etc/shadow and the host's /proc, writes outside /mnt/data and into
// a skill, memory, processes, time, the byte and file caps, links pointing outside, and
// the host side's own path handling. It prints how many attacks it tried and that all
// held. The attacks through the API (another account's container) are in
// api/containers/escape-api.test.ts, which prints its own count. Needs root (CI runs as root) and bubblewrap; elsewhere it is skipped, saying so.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BwrapSandbox, CONTAINER_BYTES } from './bwrap-sandbox.ts';
import { SandboxLimitError, SandboxPathError, type ContainerHandle } from './types.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-api-escape-'));
// The container uids must be able to reach their directories (bwrap binds them as that uid).
fs.chmodSync(root, 0o711);
const sandbox = new BwrapSandbox({ root: path.join(root, 'containers'), timeoutMs: 20_000 });
const skip = process.getuid?.() !== 0 ? 'needs root (the container caps are tmpfs mounts)' : false;
let attacks = 0;
let held = 0;
let a: ContainerHandle;
let b: ContainerHandle;
let listener: net.Server;
let connections = 0;
let port = 0;
const serviceData = path.join(root, 'data');
const skillDir = path.join(root, 'skill');

const py = (code: string, timeoutMs?: number) => sandbox.run(a, { argv: ['/usr/bin/python3', '-I', '-S', '-c', code], ...(timeoutMs ? { timeoutMs } : {}), skills: [{ name: 'tools', hostDir: skillDir }] });

/** One attack: `attempt` must show the sandbox held. */
async function attack(name: string, attempt: () => Promise<void>): Promise<void> {
  attacks++;
  await attempt();
  held++;
  void name;
}

before(async () => {
  if (skip) return;
  const status = await sandbox.status();
  assert.ok(status.available, status.reason);
  fs.mkdirSync(serviceData, { recursive: true });
  fs.writeFileSync(path.join(serviceData, 'agent-api.sqlite'), 'SQLite format 3\0 secret rows');
  fs.mkdirSync(skillDir, { recursive: true });
  fs.writeFileSync(path.join(skillDir, 'SKILL.md'), '---\nname: tools\ndescription: t\n---\n');
  a = await sandbox.create('cntr_escape_a');
  b = await sandbox.create('cntr_escape_b');
  await sandbox.writeFile(b, 'secret.txt', Buffer.from('container b secret'));
  listener = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  listener.listen(0, '0.0.0.0');
  await once(listener, 'listening');
  port = (listener.address() as net.AddressInfo).port;
});

after(async () => {
  if (skip || !a) return;
  console.log(`escape suite: ${attacks} attacks tried, ${held} held${attacks === held ? ' (all)' : ''}`);
  listener.close();
  await sandbox.destroy(a.id);
  await sandbox.destroy(b.id);
  fs.rmSync(root, { recursive: true, force: true });
});

test('no network: loopback, the host address and DNS all fail, and the host sees no connection', { skip }, async () => {
  const hostAddress = Object.values(os.networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? '127.0.0.1';
  for (const host of ['127.0.0.1', hostAddress]) {
    await attack(`connect ${host}`, async () => {
      const r = await py(`import socket\ntry:\n  socket.create_connection(('${host}', ${port}), timeout=2); print('CONNECTED')\nexcept OSError as e: print('refused', e.errno)`);
      assert.doesNotMatch(r.stdout, /CONNECTED/);
      assert.match(r.stdout, /refused/);
    });
  }
  await attack('dns', async () => {
    const r = await py(`import socket\ntry:\n  print(socket.getaddrinfo('example.com', 80))\nexcept OSError as e: print('no dns', e)`);
    assert.match(r.stdout, /no dns/);
  });
  await attack('interfaces', async () => {
    const r = await py(`import socket; print(socket.if_nameindex())`);
    assert.equal(r.stdout.trim(), "[(1, 'lo')]");
  });
  assert.equal(connections, 0);
});

test("no read of the service's data, another container, /etc/shadow or the host's /proc", { skip }, async () => {
  for (const target of [path.join(serviceData, 'agent-api.sqlite'), path.join(b.dataDir, 'secret.txt'), '/etc/shadow', '/etc/passwd', '/root/.bashrc', `/mnt/../${path.relative('/', b.dataDir)}/secret.txt`]) {
    await attack(`read ${target}`, async () => {
      const r = await py(`try:\n  print('READ', open(${JSON.stringify(target)}, 'rb').read()[:40])\nexcept OSError as e: print('denied', e.errno)`);
      assert.doesNotMatch(r.stdout, /READ/, target);
    });
  }
  await attack('host /proc', async () => {
    const r = await py(`import os\npids = [p for p in os.listdir('/proc') if p.isdigit()]\nprint(len(pids), open('/proc/1/cmdline','rb').read())`);
    const [count, cmdline] = [Number(r.stdout.split(' ')[0]), r.stdout];
    assert.ok(count <= 4, `only the sandbox's own processes are visible (${count})`);
    assert.doesNotMatch(cmdline, /node|process_api|systemd|init/);
  });
  await attack('privileges', async () => {
    const r = await py(`import os\ntry:\n  os.setuid(0); print('ROOT')\nexcept OSError as e: print('denied', os.getuid())`);
    assert.match(r.stdout, /denied 1000/);
  });
});

test('no write outside /mnt/data or into a skill; /tmp is private', { skip }, async () => {
  for (const target of ['/usr/evil', '/etc/evil', '/evil', '/mnt/skills/tools/evil', '/mnt/skills/tools/SKILL.md', '/proc/sys/kernel/hostname']) {
    await attack(`write ${target}`, async () => {
      const r = await py(`try:\n  open(${JSON.stringify(target)}, 'w').write('x'); print('WROTE')\nexcept OSError as e: print('denied', e.errno)`);
      assert.doesNotMatch(r.stdout, /WROTE/, target);
    });
  }
  assert.equal(fs.readFileSync(path.join(skillDir, 'SKILL.md'), 'utf8').startsWith('---'), true);
  await attack('skill readable', async () => {
    const r = await py(`print(open('/mnt/skills/tools/SKILL.md').read().splitlines()[1])`);
    assert.equal(r.stdout.trim(), 'name: tools');
  });
  await attack('private /tmp', async () => {
    await py(`open('/tmp/escape-marker', 'w').write('x')`);
    assert.equal(fs.existsSync('/tmp/escape-marker'), false);
  });
});

test('memory hog, fork bomb and infinite loop are stopped; the host keeps answering', { skip }, async () => {
  await attack('memory hog', async () => {
    const r = await py(`blocks = []\ntry:\n  while True: blocks.append(bytearray(100 * 1024 * 1024))\nexcept MemoryError: print('stopped at', len(blocks) * 100, 'MB')`);
    assert.match(r.stdout, /stopped at (\d+) MB/);
    assert.ok(Number(/stopped at (\d+)/.exec(r.stdout)![1]) <= 1024);
  });
  await attack('fork bomb (python)', async () => {
    const r = await py(`import os, time\nn = 0\ntry:\n  while True:\n    if os.fork() == 0:\n      time.sleep(30); os._exit(0)\n    n += 1\nexcept OSError as e: print('fork failed after', n)`, 10_000);
    assert.match(r.stdout, /fork failed after (\d+)/);
    assert.ok(Number(/after (\d+)/.exec(r.stdout)![1]) < 130, 'stopped at the process cap (128)');
  });
  await attack('fork bomb (bash)', async () => {
    const r = await sandbox.run(a, { argv: ['/bin/bash', '-c', ':(){ :|:& };:; sleep 2; echo survived'], timeoutMs: 5_000 });
    assert.ok(r.exitCode !== null || r.timedOut);
  });
  const alive = await sandbox.run(b, { argv: ['/usr/bin/python3', '-I', '-S', '-c', 'print("still here")'] });
  assert.equal(alive.stdout.trim(), 'still here', 'another container still runs');
  await attack('infinite loop', async () => {
    const r = await py('while True: pass', 1_500);
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, null);
    assert.equal(r.signal, 'SIGKILL');
  });
  await attack('a detached child outlives nothing', async () => {
    // An argument no other process has, so the check below sees only this child.
    const mark = `300.${process.pid}${Date.now() % 100_000}`;
    const r = await py(`import subprocess\nsubprocess.Popen(['/usr/bin/sleep', '${mark}'], start_new_session=True)\nwhile True: pass`, 1_000);
    assert.equal(r.timedOut, true);
    // The pid namespace is torn down right after bwrap dies; on a busy machine that takes a moment.
    const survivors = () =>
      fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(`sleep\u0000${mark}`);
        } catch {
          return false;
        }
      });
    for (let i = 0; i < 100 && survivors().length > 0; i++) await new Promise((res) => setTimeout(res, 50));
    assert.deepEqual(survivors(), [], 'no process of the container is left');
  });
});

test('the byte and file caps hold inside the container and from the host', { skip }, async () => {
  await attack('65th MB', async () => {
    const r = await py(`f = open('/mnt/data/big', 'wb')\nn = 0\ntry:\n  while True: f.write(b'x' * 1024 * 1024); f.flush(); n += 1\nexcept OSError as e: print('stopped at', n, e.errno)`);
    assert.match(r.stdout, /stopped at (\d+) (28|27)/);
    assert.ok(Number(/stopped at (\d+)/.exec(r.stdout)![1]) < 65);
  });
  await py(`import os; os.remove('/mnt/data/big')`);
  await attack('1,001st file', async () => {
    const r = await py(`import os\nn = 0\ntry:\n  while n < 1200: open('/mnt/data/f%d' % n, 'w').close(); n += 1\nexcept OSError as e: print('stopped at', n, e.errno)`);
    assert.match(r.stdout, /stopped at (\d+) 28/);
    assert.ok(Number(/stopped at (\d+)/.exec(r.stdout)![1]) < 1000);
  });
  await attack('host write past the file cap', async () => {
    await assert.rejects(sandbox.writeFile(a, 'one-more.txt', Buffer.from('x')), SandboxLimitError);
  });
  await py(`import os\nfor n in range(1200):\n  try: os.remove('/mnt/data/f%d' % n)\n  except OSError: pass`);
  await attack('host write past the byte cap', async () => {
    await assert.rejects(sandbox.writeFile(a, 'huge.bin', Buffer.alloc(CONTAINER_BYTES + 1)), SandboxLimitError);
    assert.equal(await sandbox.readFile(a, 'huge.bin'), undefined, 'nothing half-written stays');
  });
});

test('links pointing outside are never followed by the host; paths stay inside /mnt/data', { skip }, async () => {
  await attack('symlink to a host file', async () => {
    const r = await py(`import os; os.symlink('/etc/passwd', '/mnt/data/passwd-link'); os.symlink('${b.dataDir}/secret.txt', '/mnt/data/b-link'); print('ok')`);
    assert.equal(r.stdout.trim(), 'ok');
    assert.equal(await sandbox.readFile(a, 'passwd-link'), undefined);
    assert.equal(await sandbox.readFile(a, 'b-link'), undefined);
    assert.ok(!(await sandbox.listFiles(a)).some((f) => f.path.endsWith('-link')), 'links are not listed');
    const before = fs.readFileSync('/etc/passwd');
    await assert.rejects(sandbox.writeFile(a, 'passwd-link', Buffer.from('owned')), SandboxPathError);
    assert.deepEqual(fs.readFileSync('/etc/passwd'), before);
  });
  await attack('symlinked directory', async () => {
    await py(`import os; os.symlink('/etc', '/mnt/data/etc-link')`);
    assert.equal(await sandbox.readFile(a, 'etc-link/passwd'), undefined);
    await assert.rejects(sandbox.writeFile(a, 'etc-link/evil', Buffer.from('x')), SandboxPathError);
    assert.equal(fs.existsSync('/etc/evil'), false);
  });
  await attack('hard links', async () => {
    const r = await py(`import os\nopen('/mnt/data/real', 'w').write('r')\nos.link('/mnt/data/real', '/mnt/data/hard')\ntry:\n  os.link('/usr/bin/python3', '/mnt/data/py'); print('CROSSED')\nexcept OSError as e: print('no cross-device link', e.errno)`);
    assert.match(r.stdout, /no cross-device link/);
    assert.equal(await sandbox.readFile(a, 'hard'), undefined, 'a file with a second link is not read');
  });
  for (const bad of ['../escape', '/etc/passwd', 'a/../../x', 'x\u0000y', '', '.', `/mnt/data/../${path.basename(b.dataDir)}/secret.txt`]) {
    await attack(`host path ${JSON.stringify(bad)}`, async () => {
      await assert.rejects(sandbox.readFile(a, bad), SandboxPathError);
      await assert.rejects(sandbox.writeFile(a, bad, Buffer.from('x')), SandboxPathError);
    });
  }
});
