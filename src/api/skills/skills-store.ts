// Skills and their versions as rows, and the API objects made from them (SPEC "Skill").
// Every read is scoped to the account: another account's id looks like an unknown one.
// A skill's name and description are its default version's; `latest_version` is the
// highest version that exists. File bytes are blobs listed by each version's manifest;
// rows go first and their blobs after, so no row ever points at a deleted blob.
import type { Kysely, Transaction } from 'kysely';
import type { BlobStore } from '../../blobs/blob-store.ts';
import { newId } from '../../ids.ts';
import type { Database, SkillsTable, SkillVersionsTable } from '../../store/schema.ts';
import type { FrontMatter } from './skill-files.ts';
import { type ListPage, type PageOptions, listPage } from '../list-page.ts';

const sec = (ms: number) => Math.floor(ms / 1000);
/** Version numbers are INTEGER columns: anything larger names no version (PostgreSQL would refuse it). */
const MAX_VERSION = 2_147_483_647;

export interface SkillFileEntry {
  /** relative to the skill's folder */
  path: string;
  blob_key: string;
  bytes: number;
}

export type VersionDeletion = { deleted: SkillVersionsTable } | 'no_skill' | 'no_version' | 'is_default';

/** `'3'` → 3; undefined for anything that names no version. */
export function versionNumber(text: string): number | undefined {
  if (!/^[1-9]\d*$/.test(text)) return undefined;
  const n = Number(text);
  return n <= MAX_VERSION ? n : undefined;
}

/**
 * Takes the skill row's lock (a write that changes nothing), so a default being set and a
 * version being deleted cannot interleave on PostgreSQL and leave the default pointing at
 * a deleted version.
 */
function lockSkill(trx: Transaction<Database>, accountId: string, skillId: string) {
  return trx
    .updateTable('skills')
    .set((eb) => ({ next_version: eb.ref('next_version') }))
    .where('id', '=', skillId)
    .where('account_id', '=', accountId)
    .returning('default_version')
    .executeTakeFirst();
}

export class Skills {
  constructor(
    readonly db: Kysely<Database>,
    readonly blobs: BlobStore,
    private readonly clock: () => number = Date.now,
  ) {}

  async create(accountId: string, front: FrontMatter, files: readonly SkillFileEntry[]): Promise<SkillsTable> {
    const now = this.clock();
    const row: SkillsTable = { id: newId('skill_'), account_id: accountId, name: front.name, description: front.description, default_version: 1, next_version: 2, created_at: now };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('skills').values(row).execute();
      await trx.insertInto('skill_versions').values(this.versionRow(row.id, accountId, 1, front, files, now)).execute();
    });
    return row;
  }

  /** A new version (the default one if asked); undefined when the account has no such skill. */
  async addVersion(accountId: string, skillId: string, front: FrontMatter, files: readonly SkillFileEntry[], makeDefault: boolean): Promise<SkillVersionsTable | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('skills')
        .set((eb) => ({ next_version: eb('next_version', '+', 1) }))
        .where('id', '=', skillId)
        .where('account_id', '=', accountId)
        .returning('next_version')
        .executeTakeFirst();
      if (!claimed) return undefined;
      const row = this.versionRow(skillId, accountId, Number(claimed.next_version) - 1, front, files, this.clock());
      await trx.insertInto('skill_versions').values(row).execute();
      if (makeDefault) await this.pointDefault(trx, skillId, row);
      return row;
    });
  }

  private versionRow(skillId: string, accountId: string, version: number, front: FrontMatter, files: readonly SkillFileEntry[], now: number): SkillVersionsTable {
    return {
      id: newId('skillver_'),
      skill_id: skillId,
      account_id: accountId,
      version,
      name: front.name,
      description: front.description,
      manifest: JSON.stringify(files),
      file_count: files.length,
      bytes: files.reduce((n, f) => n + f.bytes, 0),
      created_at: now,
    };
  }

  private async pointDefault(trx: Transaction<Database>, skillId: string, version: SkillVersionsTable): Promise<void> {
    await trx.updateTable('skills').set({ default_version: version.version, name: version.name, description: version.description }).where('id', '=', skillId).execute();
  }

  async row(accountId: string, id: string): Promise<SkillsTable | undefined> {
    return this.db.selectFrom('skills').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  async get(accountId: string, id: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.row(accountId, id);
    if (!row) return undefined;
    return this.object(row, (await this.latest([id])).get(id) ?? row.default_version);
  }

  async list(accountId: string, page: PageOptions): Promise<ListPage<Record<string, unknown>>> {
    const limit = page.limit ?? 20;
    const order = page.order ?? 'desc';
    let q = this.db.selectFrom('skills').selectAll().where('account_id', '=', accountId);
    if (page.after) q = q.where('id', order === 'asc' ? '>' : '<', page.after);
    const rows = await q.orderBy('id', order).limit(limit + 1).execute();
    const kept = rows.slice(0, limit);
    const latest = await this.latest(kept.map((r) => r.id));
    const data = kept.map((r) => this.object(r, latest.get(r.id) ?? r.default_version));
    return listPage(data, rows.length > limit);
  }

  private async latest(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('skill_versions').select(['skill_id', (eb) => eb.fn.max('version').as('latest')]).where('skill_id', 'in', ids).groupBy('skill_id').execute();
    return new Map(rows.map((r) => [r.skill_id, Number(r.latest)]));
  }

  object(row: SkillsTable, latest: number): Record<string, unknown> {
    return {
      id: row.id,
      object: 'skill',
      name: row.name,
      description: row.description,
      created_at: sec(row.created_at),
      default_version: String(row.default_version),
      latest_version: String(latest),
    };
  }

  versionObject(row: SkillVersionsTable): Record<string, unknown> {
    return {
      id: row.id,
      object: 'skill.version',
      skill_id: row.skill_id,
      version: String(row.version),
      created_at: sec(row.created_at),
      name: row.name,
      description: row.description,
    };
  }

  /** One version: a number, `latest`, or undefined for the default one. */
  async version(accountId: string, skillId: string, version?: string): Promise<SkillVersionsTable | undefined> {
    let q = this.db.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('account_id', '=', accountId);
    if (version === 'latest') return q.orderBy('version', 'desc').limit(1).executeTakeFirst();
    if (version === undefined) {
      const skill = await this.row(accountId, skillId);
      if (!skill) return undefined;
      q = q.where('version', '=', skill.default_version);
    } else {
      const n = versionNumber(version);
      if (n === undefined) return undefined;
      q = q.where('version', '=', n);
    }
    return q.executeTakeFirst();
  }

  /** By version number; `after` is a version's id, as the list envelope gives it. 'no_cursor' when it names none of this skill's. */
  async listVersions(accountId: string, skillId: string, page: PageOptions): Promise<ListPage<Record<string, unknown>> | 'no_cursor'> {
    const limit = page.limit ?? 20;
    const order = page.order ?? 'desc';
    let q = this.db.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('account_id', '=', accountId);
    if (page.after) {
      const cursor = await this.db.selectFrom('skill_versions').select('version').where('id', '=', page.after).where('skill_id', '=', skillId).executeTakeFirst();
      if (!cursor) return 'no_cursor';
      q = q.where('version', order === 'asc' ? '>' : '<', cursor.version);
    }
    const rows = await q.orderBy('version', order).limit(limit + 1).execute();
    const data = rows.slice(0, limit).map((r) => this.versionObject(r));
    return listPage(data, rows.length > limit);
  }

  /** Points the default at an existing version. */
  async setDefault(accountId: string, skillId: string, version: string): Promise<'ok' | 'no_skill' | 'no_version'> {
    const n = versionNumber(version);
    return this.db.transaction().execute(async (trx) => {
      if (!(await lockSkill(trx, accountId, skillId))) return 'no_skill';
      const row = n === undefined ? undefined : await trx.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('version', '=', n).executeTakeFirst();
      if (!row) return 'no_version';
      await this.pointDefault(trx, skillId, row);
      return 'ok';
    });
  }

  /** Deletes the skill, its versions, then their blobs; false when the account has none such. */
  async delete(accountId: string, skillId: string): Promise<boolean> {
    const versions = await this.db.transaction().execute(async (trx) => {
      const found = await trx.selectFrom('skills').select('id').where('id', '=', skillId).where('account_id', '=', accountId).executeTakeFirst();
      if (!found) return undefined;
      const rows = await trx.selectFrom('skill_versions').select('manifest').where('skill_id', '=', skillId).execute();
      await trx.deleteFrom('skill_versions').where('skill_id', '=', skillId).execute();
      await trx.deleteFrom('skills').where('id', '=', skillId).execute();
      return rows;
    });
    if (!versions) return false;
    for (const v of versions) await this.deleteBlobs(JSON.parse(v.manifest) as SkillFileEntry[]);
    return true;
  }

  /**
   * Deletes one version and then its blobs. The default version cannot be deleted (point
   * the default elsewhere first, or delete the skill), so a skill always has one to mount.
   */
  async deleteVersion(accountId: string, skillId: string, version: string): Promise<VersionDeletion> {
    const n = versionNumber(version);
    const result = await this.db.transaction().execute(async (trx): Promise<VersionDeletion> => {
      const skill = await lockSkill(trx, accountId, skillId);
      if (!skill) return 'no_skill';
      const row = n === undefined ? undefined : await trx.selectFrom('skill_versions').selectAll().where('skill_id', '=', skillId).where('version', '=', n).executeTakeFirst();
      if (!row) return 'no_version';
      if (row.version === Number(skill.default_version)) return 'is_default';
      await trx.deleteFrom('skill_versions').where('id', '=', row.id).execute();
      return { deleted: row };
    });
    if (typeof result === 'object') await this.deleteBlobs(JSON.parse(result.deleted.manifest) as SkillFileEntry[]);
    return result;
  }

  async deleteBlobs(files: readonly SkillFileEntry[]): Promise<void> {
    await Promise.all(files.map((f) => this.blobs.delete(f.blob_key)));
  }
}
