// Containers and their files as rows, and the API objects made from them (SPEC
// "Container", "Container file"). Every read is scoped to the account: another account's
// id looks exactly like an unknown one. A container idle past its expires_after is
// expired when read, whether or not the sweep has removed its files yet, so no caller
// can use it in between; the sweep (`expire`) removes the files and the file rows.
import { sql, type Kysely } from 'kysely';
import { newId } from '../../ids.ts';
import type { ContainerFilesTable, ContainersTable, Database } from '../../store/schema.ts';
import { type ListPage, type PageOptions, listPage } from '../list-page.ts';

const MINUTE_MS = 60_000;
/** An expired container's row is kept this long (retrieve says `expired`), then deleted. */
export const EXPIRED_RETENTION_MS = 7 * 86_400_000;
const sec = (ms: number) => Math.floor(ms / 1000);

export const DATA_ROOT = '/mnt/data/';

export const newContainerId = () => newId('cntr_');

export interface ContainerObject {
  id: string;
  object: 'container';
  name: string;
  created_at: number;
  status: 'running' | 'expired';
  last_active_at: number;
  expires_after: { anchor: 'last_active_at'; minutes: number };
  memory_limit: '1g';
  network_policy: { type: 'disabled' };
}

export interface ContainerFileObject {
  id: string;
  object: 'container.file';
  container_id: string;
  created_at: number;
  bytes: number;
  path: string;
  source: 'user' | 'assistant';
}

export interface Logger {
  warn(obj: object, msg?: string): void;
}

export class Containers {
  constructor(
    readonly db: Kysely<Database>,
    private readonly clock: () => number = Date.now,
  ) {}

  // --- containers -----------------------------------------------------------------------

  async create(accountId: string, input: { name: string; expiresAfterMinutes: number; skills?: unknown[] | null; id?: string }): Promise<ContainersTable> {
    const now = this.clock();
    const row: ContainersTable = {
      id: input.id ?? newContainerId(),
      account_id: accountId,
      name: input.name,
      expires_after_minutes: input.expiresAfterMinutes,
      skills: input.skills && input.skills.length > 0 ? JSON.stringify(input.skills) : null,
      created_at: now,
      last_active_at: now,
      expired_at: null,
      files_version: 0,
    };
    await this.db.insertInto('containers').values(row).execute();
    return row;
  }

  async row(accountId: string, id: string): Promise<ContainersTable | undefined> {
    return this.db.selectFrom('containers').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  }

  /** How many of the account's containers are running (not expired, not idle past their expiry). */
  async countRunning(accountId: string): Promise<number> {
    const r = await this.db
      .selectFrom('containers')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .where('expired_at', 'is', null)
      .where(sql<boolean>`last_active_at + expires_after_minutes * ${MINUTE_MS} > ${this.clock()}`)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** A container whatever its account (the host's own housekeeping). */
  async byId(id: string): Promise<ContainersTable | undefined> {
    return this.db.selectFrom('containers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Expired by the sweep, or idle past its expiry and waiting for it. */
  isExpired(row: ContainersTable): boolean {
    return row.expired_at !== null || row.last_active_at + row.expires_after_minutes * MINUTE_MS <= this.clock();
  }

  /** Marks a use; an expired container is never revived (false then). */
  async touch(id: string): Promise<boolean> {
    const now = this.clock();
    const r = await this.db
      .updateTable('containers')
      .set({ last_active_at: now })
      .where('id', '=', id)
      .where('expired_at', 'is', null)
      .where(sql<boolean>`last_active_at + expires_after_minutes * ${MINUTE_MS} > ${now}`)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async list(accountId: string, page: PageOptions & { name?: string }): Promise<ListPage<ContainerObject>> {
    const limit = page.limit ?? 20;
    const order = page.order ?? 'desc';
    let q = this.db.selectFrom('containers').selectAll().where('account_id', '=', accountId);
    if (page.name !== undefined) q = q.where('name', '=', page.name);
    // Ids sort by creation, so the cursor is a plain comparison.
    if (page.after) q = q.where('id', order === 'asc' ? '>' : '<', page.after);
    const rows = await q.orderBy('id', order).limit(limit + 1).execute();
    return listPage(rows.slice(0, limit).map((r) => this.object(r)), rows.length > limit);
  }

  /** Deletes the rows (the files' go with them); the files' blob keys, or false when the account has none such. */
  async delete(accountId: string, id: string): Promise<string[] | false> {
    return this.db.transaction().execute(async (trx) => {
      const files = await trx.deleteFrom('container_files').where('container_id', '=', id).where('account_id', '=', accountId).returning('blob_key').execute();
      const r = await trx.deleteFrom('containers').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0 ? files.map((f) => f.blob_key).filter((k): k is string => k !== null) : false;
    });
  }

  object(row: ContainersTable): ContainerObject {
    return {
      id: row.id,
      object: 'container',
      name: row.name,
      created_at: sec(row.created_at),
      status: this.isExpired(row) ? 'expired' : 'running',
      last_active_at: sec(row.last_active_at),
      expires_after: { anchor: 'last_active_at', minutes: row.expires_after_minutes },
      memory_limit: '1g',
      network_policy: { type: 'disabled' },
    };
  }

  /**
   * Expires the containers idle past their expires_after: the row is marked first (only
   * if no use touched it since it was read), then the sandbox's files and the file rows
   * go, so a use racing the sweep either wins (and the container lives) or finds it
   * expired. Rows expired longer than EXPIRED_RETENTION_MS are deleted. Returns how many
   * containers expired.
   */
  async expire(removeFiles: (containerId: string, blobKeys: string[]) => Promise<void>, log?: Logger): Promise<number> {
    const now = this.clock();
    const due = await this.db
      .selectFrom('containers')
      .select(['id', 'last_active_at'])
      .where('expired_at', 'is', null)
      .where(sql<boolean>`last_active_at + expires_after_minutes * ${MINUTE_MS} <= ${now}`)
      .limit(1000)
      .execute();
    let expired = 0;
    for (const { id, last_active_at } of due) {
      const r = await this.db.updateTable('containers').set({ expired_at: now }).where('id', '=', id).where('expired_at', 'is', null).where('last_active_at', '=', last_active_at).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) continue;
      expired++;
      await this.removeAll(id, removeFiles, log);
    }
    // Files an expiry cut off by a crash left behind.
    const leftover = await this.db
      .selectFrom('containers')
      .select('id')
      .where('expired_at', 'is not', null)
      .where((eb) => eb.exists(eb.selectFrom('container_files').select('id').whereRef('container_files.container_id', '=', 'containers.id')))
      .limit(100)
      .execute();
    for (const { id } of leftover) await this.removeAll(id, removeFiles, log);
    await this.db.deleteFrom('containers').where('expired_at', '<=', now - EXPIRED_RETENTION_MS).execute();
    return expired;
  }

  /** The container's file rows, then its files (directory, the rows' blobs). */
  private async removeAll(id: string, removeFiles: (containerId: string, blobKeys: string[]) => Promise<void>, log?: Logger): Promise<void> {
    const rows = await this.db.deleteFrom('container_files').where('container_id', '=', id).returning('blob_key').execute();
    try {
      await removeFiles(
        id,
        rows.map((r) => r.blob_key).filter((k): k is string => k !== null),
      );
    } catch (err) {
      log?.warn({ err, container: id }, "an expired container's files could not be removed");
    }
  }

  /** Counts a change to the container's files; the version it is now. */
  async bumpFilesVersion(id: string): Promise<number> {
    const r = await this.db.updateTable('containers').set((eb) => ({ files_version: eb('files_version', '+', 1) })).where('id', '=', id).returning('files_version').executeTakeFirst();
    return Number(r?.files_version ?? -1);
  }

  // --- files ----------------------------------------------------------------------------

  /**
   * A file's row written (a row of that path is taken over: its id, bytes, source and
   * blob replaced); returns the blob key the path had before, for the caller to delete.
   * One statement, so two writes of one path at once cannot both insert.
   */
  async putFile(row: ContainerFilesTable): Promise<string | null> {
    return this.db.transaction().execute(async (trx) => {
      // Writers of one container's files take turns (a row lock on PostgreSQL; SQLite runs
      // one transaction at a time), so the blob the path had is known exactly.
      await trx.updateTable('containers').set((eb) => ({ files_version: eb.ref('files_version') })).where('id', '=', row.container_id).execute();
      const before = await trx.selectFrom('container_files').select('blob_key').where('container_id', '=', row.container_id).where('path', '=', row.path).executeTakeFirst();
      await trx
      .insertInto('container_files')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['container_id', 'path']).doUpdateSet((eb) => ({
          id: eb.ref('excluded.id'),
          bytes: eb.ref('excluded.bytes'),
          source: eb.ref('excluded.source'),
          created_at: eb.ref('excluded.created_at'),
          blob_key: eb.ref('excluded.blob_key'),
        })),
      )
      .execute();
      return before?.blob_key && before.blob_key !== row.blob_key ? before.blob_key : null;
    });
  }

  /** Every file row of the container (at most the container's 1,000 files). */
  async filesOf(containerId: string): Promise<ContainerFilesTable[]> {
    return this.db.selectFrom('container_files').selectAll().where('container_id', '=', containerId).limit(5_000).execute();
  }

  /** Deletes file rows; returns their blob keys. */
  async removeFileRows(ids: readonly string[]): Promise<string[]> {
    const keys: string[] = [];
    for (let i = 0; i < ids.length; i += 200) {
      // The keys of exactly the rows deleted, even with a write of the same rows at once.
      const rows = await this.db.deleteFrom('container_files').where('id', 'in', ids.slice(i, i + 200)).returning('blob_key').execute();
      for (const r of rows) if (r.blob_key) keys.push(r.blob_key);
    }
    return keys;
  }

  newFileRow(container: ContainersTable, path: string, bytes: number, source: 'user' | 'assistant', blobKey: string | null, id = newId('cfile_')): ContainerFilesTable {
    return { id, container_id: container.id, account_id: container.account_id, path, bytes, source, created_at: this.clock(), blob_key: blobKey };
  }

  async fileRow(accountId: string, containerId: string, fileId: string): Promise<ContainerFilesTable | undefined> {
    return this.db
      .selectFrom('container_files')
      .selectAll()
      .where('id', '=', fileId)
      .where('container_id', '=', containerId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /** The rows of these paths (/mnt/data/...), in path order. */
  async fileRows(containerId: string, paths: readonly string[]): Promise<ContainerFilesTable[]> {
    const out: ContainerFilesTable[] = [];
    for (let i = 0; i < paths.length; i += 200) {
      out.push(...(await this.db.selectFrom('container_files').selectAll().where('container_id', '=', containerId).where('path', 'in', paths.slice(i, i + 200)).execute()));
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async listFiles(containerId: string, page: PageOptions): Promise<ListPage<ContainerFileObject>> {
    const limit = page.limit ?? 20;
    const order = page.order ?? 'desc';
    let q = this.db.selectFrom('container_files').selectAll().where('container_id', '=', containerId);
    if (page.after) q = q.where('id', order === 'asc' ? '>' : '<', page.after);
    const rows = await q.orderBy('id', order).limit(limit + 1).execute();
    return listPage(rows.slice(0, limit).map(fileObject), rows.length > limit);
  }
}

export function fileObject(row: ContainerFilesTable): ContainerFileObject {
  return {
    id: row.id,
    object: 'container.file',
    container_id: row.container_id,
    created_at: sec(row.created_at),
    bytes: Number(row.bytes),
    path: row.path,
    source: row.source,
  };
}

