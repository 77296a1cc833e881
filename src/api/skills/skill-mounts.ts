// A skill version's files on the host, for a container to bind-mount read-only at
// /mnt/skills/<name>. Written once under <baseDir>/<skill_id>/<version>/: into a temp
// folder beside it, then renamed into place, so a folder under its final name is always
// complete and a second call (or a concurrent one) just uses it. Files are 0444 and
// folders 0555. Every path is checked again before it touches the disk (plain, relative,
// inside the folder) and files are created exclusively, so nothing is written through a
// link or outside the folder. The folders above are 0711: searchable, not listable.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { makeDirs } from '../../sandbox/sandbox-root.ts';
import { pathProblem } from './skill-files.ts';
import type { SkillFileEntry, Skills } from './skills-store.ts';

export interface SkillMount {
  /** the version's SKILL.md name: the folder under /mnt/skills */
  name: string;
  /** the host folder holding the version's files */
  hostDir: string;
}

const SKILL_ID = /^skill_[A-Za-z0-9]{1,64}$/;

const exists = (p: string) =>
  fs.stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** Makes a materialized tree writable again and removes it (a skill deleted, a cache cleared). */
export async function removeTree(dir: string): Promise<void> {
  const walk = async (d: string): Promise<void> => {
    await fs.chmod(d, 0o755).catch(() => undefined);
    for (const e of await fs.readdir(d, { withFileTypes: true }).catch(() => [])) if (e.isDirectory()) await walk(path.join(d, e.name));
  };
  await walk(dir);
  await fs.rm(dir, { recursive: true, force: true });
}

export class SkillMounts {
  constructor(private readonly skills: Skills) {}

  /** The version a reference names (a number, `latest`, or undefined for the default), without writing it out. */
  async resolve(accountId: string, skillId: string, version: string | undefined): Promise<{ name: string; version: string } | undefined> {
    if (!SKILL_ID.test(skillId)) return undefined;
    const row = await this.skills.version(accountId, skillId, version);
    return row ? { name: row.name, version: String(row.version) } : undefined;
  }

  /**
   * Writes the version (a number, `latest`, or undefined for the default) under
   * `<baseDir>/<skill_id>/<version>/` unless it is there already; undefined when the
   * account has no such skill or version.
   */
  async materialize(accountId: string, skillId: string, version: string | undefined, baseDir: string): Promise<SkillMount | undefined> {
    if (!SKILL_ID.test(skillId)) return undefined;
    const row = await this.skills.version(accountId, skillId, version);
    if (!row) return undefined;
    const parent = path.join(path.resolve(baseDir), skillId);
    const hostDir = path.join(parent, String(row.version));
    if (await exists(hostDir)) return { name: row.name, hostDir };
    // Searchable by the container uids whatever the umask (they reach the files through it).
    await makeDirs(parent);
    const tmp = path.join(parent, `.tmp-${row.version}-${randomBytes(6).toString('hex')}`);
    await fs.mkdir(tmp, { mode: 0o700 });
    try {
      const dirs = new Set<string>();
      for (const f of JSON.parse(row.manifest) as SkillFileEntry[]) {
        const problem = pathProblem(f.path);
        if (problem) throw new Error(`skill ${skillId} version ${row.version}: refused path (${problem})`);
        const target = path.join(tmp, f.path);
        const rel = path.relative(tmp, target);
        if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`skill ${skillId} version ${row.version}: a path leaves its folder`);
        for (let d = path.dirname(target); d !== tmp; d = path.dirname(d)) dirs.add(d);
        await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        // 'wx': created here or refused (never through an existing file or link).
        await pipeline(await this.skills.blobs.get(f.blob_key), createWriteStream(target, { flags: 'wx', mode: 0o444 }));
        await fs.chmod(target, 0o444);
      }
      // Deepest first, so each folder is still writable while its children change.
      for (const d of [...dirs].sort((a, b) => b.length - a.length)) await fs.chmod(d, 0o555);
      await fs.chmod(tmp, 0o555);
      try {
        await fs.rename(tmp, hostDir);
      } catch (err) {
        // Another call put it in place first.
        const code = (err as NodeJS.ErrnoException).code;
        if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await exists(hostDir))) {
          await removeTree(tmp);
          return { name: row.name, hostDir };
        }
        throw err;
      }
    } catch (err) {
      await removeTree(tmp);
      throw err;
    }
    return { name: row.name, hostDir };
  }
}
