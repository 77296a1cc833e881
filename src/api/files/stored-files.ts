// Uploaded files (SPEC "File", "Lifetimes": kept until deleted): a row per file, the
// bytes in the blob store. Every read is scoped to the account, so another account's id
// looks exactly like an unknown one (undefined here, 404 in the routes).
//
// Row and blob stay consistent: the blob is written first and the row after it (a failed
// insert deletes the blob); a delete removes the row, then the blob. A crash between the
// two leaves an orphan blob, never a row without bytes; orphans are harmless (no row
// names them) and are not swept yet, since container files, skills and batch outputs
// will keep blobs too and a sweep must know every table that does.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { BlobStore, ByteRange } from '../../blobs/blob-store.ts';
import type { UploadedFile } from '../../contract/form.ts';
import { newId } from '../../ids.ts';
import type { Database, FilesTable } from '../../store/schema.ts';
import { contentTypeFor } from './content-type.ts';

export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  expires_at: number | null;
  filename: string;
  purpose: string;
  status: string;
  status_details: null;
}

export interface FileList {
  object: 'list';
  data: FileObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface ListOptions {
  purpose?: string;
  /** 1 to 10,000 (the contract checks it); default 10,000 as the reference */
  limit?: number;
  after?: string;
  /** default desc, as the reference */
  order?: 'asc' | 'desc';
}

export interface FileContent {
  file: FilesTable;
  stream: Readable;
}

interface Log {
  warn(obj: object, msg?: string): void;
}

export class StoredFiles {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly blobs: BlobStore,
    private readonly log: Log,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Keeps an upload as the account's file: the blob is claimed, then the row written. */
  async create(accountId: string, upload: UploadedFile, purpose: string): Promise<FileObject> {
    const blob = upload.claim();
    return this.insert(accountId, { filename: upload.filename, purpose, ...blob }, null);
  }

  /**
   * Stores a stream as a new file of the account (files the service writes itself, such
   * as batch outputs): a blob up to `maxBytes`, then the row.
   */
  async write(accountId: string, input: { filename: string; purpose: string; source: Readable; maxBytes: number; expiresAt?: number | null }): Promise<FileObject> {
    const blob = await this.blobs.put(input.source, { maxBytes: input.maxBytes });
    return this.insert(accountId, { filename: input.filename, purpose: input.purpose, ...blob }, input.expiresAt ?? null);
  }

  async get(accountId: string, id: string): Promise<FileObject | undefined> {
    const row = await this.visible(accountId, id).selectAll().executeTakeFirst();
    return row && toObject(row);
  }

  async list(accountId: string, options: ListOptions = {}): Promise<FileList> {
    const limit = options.limit ?? 10_000;
    const order = options.order ?? 'desc';
    let q = this.db
      .selectFrom('files')
      .selectAll()
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', this.clock())]));
    if (options.purpose !== undefined) q = q.where('purpose', '=', options.purpose);
    // Ids sort by creation, so the cursor is a plain comparison (a deleted cursor item still works).
    if (options.after !== undefined) q = q.where('id', order === 'asc' ? '>' : '<', options.after);
    const rows = await q.orderBy('id', order).limit(limit + 1).execute();
    const data = rows.slice(0, limit).map(toObject);
    return {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: rows.length > limit,
    };
  }

  /** Deletes the row, then the blob; undefined when the account has no such file. */
  async delete(accountId: string, id: string): Promise<{ id: string; object: 'file'; deleted: true } | undefined> {
    const row = await this.db.deleteFrom('files').where('id', '=', id).where('account_id', '=', accountId).returning('blob_key').executeTakeFirst();
    if (!row) return undefined;
    await this.blobs.delete(row.blob_key).catch((err: unknown) => this.log.warn({ err, file: id }, 'file deleted, but its blob could not be removed (an orphan)'));
    return { id, object: 'file', deleted: true };
  }

  /**
   * The file's bytes, or the range `pickRange` chooses once the size is known; undefined
   * when the account has no such file.
   */
  async open(accountId: string, id: string, pickRange?: (bytes: number) => ByteRange | undefined): Promise<FileContent | undefined> {
    const file = await this.visible(accountId, id).selectAll().executeTakeFirst();
    if (!file) return undefined;
    return { file, stream: await this.blobs.get(file.blob_key, pickRange?.(Number(file.bytes))) };
  }

  /**
   * The whole content of a file of at most `maxBytes` (chat messages name files by id);
   * 'too_large' past that, undefined when the account has no such file.
   */
  async read(accountId: string, id: string, maxBytes: number): Promise<{ file: FilesTable; content: Buffer } | 'too_large' | undefined> {
    const file = await this.visible(accountId, id).selectAll().executeTakeFirst();
    if (!file) return undefined;
    if (Number(file.bytes) > maxBytes) return 'too_large';
    const chunks: Buffer[] = [];
    for await (const chunk of await this.blobs.get(file.blob_key)) chunks.push(chunk as Buffer);
    return { file, content: Buffer.concat(chunks) };
  }

  private async insert(accountId: string, f: { filename: string; purpose: string; key: string; bytes: number; sha256: string }, expiresAt: number | null): Promise<FileObject> {
    const row: FilesTable = {
      id: newId('file-'),
      account_id: accountId,
      purpose: f.purpose,
      filename: f.filename,
      bytes: f.bytes,
      content_type: contentTypeFor(f.filename),
      blob_key: f.key,
      sha256: f.sha256,
      status: 'processed',
      created_at: this.clock(),
      expires_at: expiresAt,
    };
    try {
      await this.db.insertInto('files').values(row).execute();
    } catch (err) {
      // No row, so no blob either.
      await this.blobs.delete(f.key).catch(() => undefined);
      throw err;
    }
    return toObject(row);
  }

  private visible(accountId: string, id: string) {
    return this.db
      .selectFrom('files')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', this.clock())]));
  }
}

export function toObject(row: FilesTable): FileObject {
  return {
    id: row.id,
    object: 'file',
    bytes: Number(row.bytes),
    created_at: Math.floor(row.created_at / 1000),
    expires_at: row.expires_at === null ? null : Math.floor(row.expires_at / 1000),
    filename: row.filename,
    purpose: row.purpose,
    status: row.status,
    status_details: null,
  };
}
