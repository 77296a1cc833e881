// The messages-style surface's Files API (SPEC "Sibling surfaces": `/v1/files`, images
// and documents referenced by `file_id`; the Files switch): the vendor's five endpoints
// as both SDK generations call them (`client.files` and `client.beta.files`: upload,
// list, retrieveMetadata, download, delete), over the same files store as /v1/files.
import { z } from 'zod';
import { applied, binaryContentSchema, fileUpload, MB, noEffect, objectId, refused } from '../fields.ts';
import type { FieldTable } from '../types.ts';
import { betaQuery } from './messages-query.ts';
import { defineEndpoint } from '../types.ts';

/** `?beta=true`, which the SDKs add on their beta methods (0.x puts it in the path). */

/** Ids per `ids` filter (the vendor's bound). */
export const MAX_LISTED_IDS = 100;

export const fileMetadataSchema = z
  .looseObject({
    id: z.string(),
    type: z.literal('file'),
    filename: z.string(),
    mime_type: z.string(),
    size_bytes: z.number().int(),
    created_at: z.string(),
    downloadable: z.boolean(),
    expires_at: z.string().nullable(),
  })
  .meta({ id: 'FileMetadata' });

const fileIdParams = { file_id: objectId() };
const permission = 'files' as const;

export const uploadMessagesFile = defineEndpoint({
  operationId: 'files_upload',
  method: 'POST',
  path: '/files',
  family: 'files',
  summary: 'Uploads a file (kept until deleted, in the same store as /v1/files), to name by file_id in image and document blocks.',
  permission,
  query: betaQuery,
  body: {
    type: 'multipart',
    required: ['file'],
    fields: {
      file: fileUpload('up to 20 MB', { maxBytes: 20 * MB }),
      expires_in_seconds: refused('files stay until deleted; an expiry cannot be set'),
    },
  },
  response: { schema: fileMetadataSchema },
  notes: ['needs the Files switch', 'files stay until deleted', 'the same file is listed at /v1/files with purpose user_data'],
});

export const listMessagesFiles = defineEndpoint({
  operationId: 'files_list',
  method: 'GET',
  path: '/files',
  family: 'files',
  summary: "Lists the account's files, newest first, in pages.",
  permission,
  query: {
    limit: applied(z.coerce.number().int().min(1).max(1000), 'page size, 1 to 1,000 (default 20)'),
    after_id: applied(objectId(), 'the page after this file id (older files)'),
    before_id: applied(objectId(), 'the page before this file id (newer files)'),
    page: applied(objectId(), 'the `next_page` cursor of the previous page (the same as after_id)'),
    ids: applied(z.union([objectId(), z.array(objectId()).min(1).max(MAX_LISTED_IDS, `ids holds at most ${MAX_LISTED_IDS} ids`)]), 'only these files, in one page; unknown ids are left out'),
    scope_id: applied(z.string().min(1).max(256), 'files of that scope (a session): no file here has one, so the list is empty'),
    ...betaQuery,
  },
  response: {
    schema: z.looseObject({
      data: z.array(fileMetadataSchema),
      has_more: z.boolean(),
      first_id: z.string().nullable(),
      last_id: z.string().nullable(),
      next_page: z.string().nullable(),
    }),
  },
});

export const retrieveMessagesFile = defineEndpoint({
  operationId: 'files_metadata',
  method: 'GET',
  path: '/files/{file_id}',
  family: 'files',
  summary: "Retrieves a file's metadata.",
  permission,
  query: betaQuery,
  params: fileIdParams,
  response: { schema: fileMetadataSchema },
});

export const downloadMessagesFile = defineEndpoint({
  operationId: 'files_content',
  method: 'GET',
  path: '/files/{file_id}/content',
  family: 'files',
  summary: "Returns a file's content (every file here is downloadable, uploads included).",
  permission,
  query: betaQuery,
  params: fileIdParams,
  response: { schema: binaryContentSchema, alternate: 'binary', contentType: 'application/octet-stream' },
});

export const deleteMessagesFile = defineEndpoint({
  operationId: 'files_delete',
  method: 'DELETE',
  path: '/files/{file_id}',
  family: 'files',
  summary: 'Deletes a file (here and at /v1/files, and from every vector store that holds it).',
  permission,
  query: betaQuery,
  params: fileIdParams,
  response: { schema: z.looseObject({ id: z.string(), type: z.literal('file_deleted') }) },
});

export const messagesFilesEndpoints = [uploadMessagesFile, listMessagesFiles, retrieveMessagesFile, downloadMessagesFile, deleteMessagesFile] as const;
