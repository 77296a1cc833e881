// /files (SPEC "Files and batches"): upload, list, retrieve, delete, download. The
// contract step has checked the form (purpose, refused expires_after, the size limit)
// and the file is already in the blob store; only the key's own account sees a file,
// and any other id is 404 model_not_found. Deleting a file also removes it from every
// vector store that holds it (`detach`).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createFile, deleteFile, downloadFile, listFiles, retrieveFile } from '../../contract/endpoints/files.ts';
import { notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { parseRange, type Satisfiable } from './byte-range.ts';
import type { ListOptions, StoredFiles } from './stored-files.ts';

const missing = (id: string) => notFound(`No such File object: ${id}`, 'file_id');

function found<T>(value: T | undefined, id: string): T {
  if (value === undefined) throw missing(id);
  return value;
}

/** The list fields; the contract spreads the shared ones as a generic table, so they arrive untyped. */
function listOptions(query: Record<string, unknown>): ListOptions {
  return {
    ...(typeof query.limit === 'number' ? { limit: query.limit } : {}),
    ...(typeof query.after === 'string' ? { after: query.after } : {}),
    ...(query.order === 'asc' || query.order === 'desc' ? { order: query.order } : {}),
    ...(typeof query.purpose === 'string' ? { purpose: query.purpose } : {}),
  };
}

export interface FilesRoutesOptions {
  /** Removes a file being deleted from whatever else holds it (the vector stores). */
  detach?: (accountId: string, fileId: string) => Promise<void>;
}

export function filesRoutes(router: Router, files: StoredFiles, options: FilesRoutesOptions = {}): void {
  const { detach } = options;
  router.endpoint(createFile, async ({ body, key }) => files.create(key.accountId, body.file!, body.purpose!));

  router.endpoint(listFiles, async ({ query, key }) => files.list(key.accountId, listOptions(query)));

  router.endpoint(retrieveFile, async ({ params, key }) => found(await files.get(key.accountId, params.file_id!), params.file_id!));

  router.endpoint(deleteFile, async ({ params, key }) => deleteStoredFile(files, key.accountId, params.file_id!, detach));

  router.endpoint(downloadFile, async ({ params, key, request, reply }) => sendFileContent(files, key.accountId, params.file_id!, request, reply));
}

/** Deletes the account's file (404 when it has none), first from whatever else holds it; shared by every root's files endpoints. */
export async function deleteStoredFile(files: StoredFiles, accountId: string, id: string, detach?: FilesRoutesOptions['detach']) {
  if (!detach) return found(await files.delete(accountId, id), id);
  found(await files.get(accountId, id), id);
  // The stores first: a crash after this leaves the file, which a retried delete removes,
  // rather than passages of a file that is gone. Once more after the row is gone, for a
  // store the file was added to meanwhile.
  await detach(accountId, id);
  const deleted = found(await files.delete(accountId, id), id);
  await detach(accountId, id);
  return deleted;
}

/** Answers with the account's file content, or the byte range asked for (404 when it has no such file). */
export async function sendFileContent(files: StoredFiles, accountId: string, id: string, request: FastifyRequest, reply: FastifyReply) {
  let range: Satisfiable | undefined;
  const content = await files.open(accountId, id, (size) => (range = parseRange(request.headers.range, size)));
  const { file, stream } = found(content, id);
  reply.header('content-type', file.content_type).header('accept-ranges', 'bytes');
  if (range) {
    reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.bytes}`).header('content-length', range.end - range.start + 1);
  } else {
    reply.header('content-length', file.bytes);
  }
  return reply.send(stream);
}
