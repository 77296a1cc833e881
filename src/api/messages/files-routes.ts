// The messages-style surface's Files API (contract/endpoints/messages-files.ts), over the
// one files store /v1/files uses: an upload here is a /v1 file of purpose user_data, any
// /v1 file is listed here, and only the key's own account sees a file (another account's
// id is 404, as an unknown one). The vendor lets only files its tools made be downloaded
// (`downloadable: false` on uploads); here every file is downloadable, as at /v1/files,
// and says so.
import { deleteMessagesFile, downloadMessagesFile, listMessagesFiles, retrieveMessagesFile, uploadMessagesFile } from '../../contract/endpoints/messages-files.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { contentTypeFor } from '../files/content-type.ts';
import { deleteStoredFile, sendFileContent } from '../files/routes.ts';
import type { FileObject } from '../files/stored-files.ts';
import { detachDeletedFile } from '../vector-stores/routes.ts';
import { VectorStores } from '../vector-stores/vector-stores-store.ts';

/** The purpose an upload here has at /v1/files (general files, usable in messages). */
const UPLOAD_PURPOSE = 'user_data';
const DEFAULT_PAGE = 20;

const rfc3339 = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A stored file in the vendor's FileMetadata shape. */
export function fileMetadata(f: FileObject) {
  return {
    id: f.id,
    type: 'file' as const,
    filename: f.filename,
    mime_type: contentTypeFor(f.filename).split(';')[0]!,
    size_bytes: f.bytes,
    created_at: rfc3339(f.created_at),
    downloadable: true,
    expires_at: f.expires_at === null ? null : rfc3339(f.expires_at),
  };
}

export function messagesFilesRoutes(router: Router): void {
  const { files, store, jobs } = router.services;
  const detach = detachDeletedFile(new VectorStores(store.db), jobs);
  const found = async (accountId: string, id: string) => {
    const f = await files.get(accountId, id);
    if (!f) throw notFound(`File not found: ${id}`, 'file_id');
    return f;
  };

  router.endpoint(uploadMessagesFile, async ({ body, key }) => fileMetadata(await files.create(key.accountId, body.file!, UPLOAD_PURPOSE)));

  router.endpoint(listMessagesFiles, async ({ query, key }) => {
    const page = (data: FileObject[], hasMore: boolean, forward: boolean) => ({
      data: data.map(fileMetadata),
      has_more: hasMore,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      // The SDKs' cursor pages follow next_page (sent back as `page`); before_id pages follow first_id.
      next_page: forward && hasMore ? (data.at(-1)?.id ?? null) : null,
    });
    if (query.scope_id !== undefined) return page([], false, true);
    if (query.ids !== undefined) {
      const ids = [...new Set(Array.isArray(query.ids) ? query.ids : [query.ids])];
      const listed = (await Promise.all(ids.map((id) => files.get(key.accountId, id)))).filter((f) => f !== undefined);
      return page(listed.sort((a, b) => (a.id < b.id ? 1 : -1)), false, true);
    }
    const after = query.page ?? query.after_id;
    if (after !== undefined && query.before_id !== undefined) throw invalidRequest('cannot be sent with after_id or page: a page goes one way.', 'before_id');
    const limit = query.limit ?? DEFAULT_PAGE;
    if (query.before_id !== undefined) {
      // Newer than before_id, nearest first, then shown newest first like every page.
      const newer = await files.list(key.accountId, { order: 'asc', after: query.before_id, limit });
      return page(newer.data.reverse(), newer.has_more, false);
    }
    const older = await files.list(key.accountId, { order: 'desc', limit, ...(after !== undefined ? { after } : {}) });
    return page(older.data, older.has_more, true);
  });

  router.endpoint(retrieveMessagesFile, async ({ params, key }) => fileMetadata(await found(key.accountId, params.file_id!)));

  router.endpoint(downloadMessagesFile, async ({ params, key, request, reply }) => sendFileContent(files, key.accountId, params.file_id!, request, reply));

  router.endpoint(deleteMessagesFile, async ({ params, key }) => {
    await deleteStoredFile(files, key.accountId, params.file_id!, detach);
    return { id: params.file_id!, type: 'file_deleted' as const };
  });
}
