// File endpoints (SPEC "Files and batches": only batches need the Files switch; File resource:
// up to 20 MB, 100 MB for a batch .jsonl; files stay until deleted).
import { z } from 'zod';
import { applied, binaryContentSchema, deletionSchema, fileUpload, listQueryFields, listSchema, MB, refused } from '../fields.ts';
import { defineEndpoint } from '../types.ts';

export const FILE_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;

export const fileObjectSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('file'),
    bytes: z.number().int(),
    created_at: z.number().int(),
    filename: z.string(),
    // Uploaded purposes plus the ones the service gives to files it writes (batch output).
    purpose: z.enum([...FILE_PURPOSES, 'assistants_output', 'batch_output', 'fine-tune-results']),
    status: z.enum(['uploaded', 'processed', 'error']),
    expires_at: z.number().int().nullable().optional(),
    status_details: z.string().nullable().optional(),
  })
  .meta({ id: 'FileObject' });

const fileIdParams = { file_id: z.string() };

/** SPEC "Limits": 20 MB a file; 100 MB for a batch .jsonl. */
export const FILE_UPLOAD_LIMIT = { maxBytes: 20 * MB, larger: { maxBytes: 100 * MB, filenameSuffix: '.jsonl', when: { purpose: 'batch' } } } as const;
const notes = ['files stay in the workspace until deleted'];

export const createFile = defineEndpoint({
  operationId: 'createFile',
  method: 'POST',
  path: '/files',
  family: 'files',
  summary: 'Uploads a file to the workspace.',
  body: {
    type: 'multipart',
    required: ['file', 'purpose'],
    fields: {
      file: fileUpload('up to 20 MB; a batch .jsonl up to 100 MB', FILE_UPLOAD_LIMIT),
      purpose: applied(z.enum(FILE_PURPOSES), FILE_PURPOSES.join(', ')),
      expires_after: refused('files stay until deleted; an expiry cannot be set'),
    },
  },
  response: { schema: fileObjectSchema },
  notes: [...notes, 'upload up to 20 MB; 100 MB for a batch .jsonl (purpose batch)'],
});

export const listFiles = defineEndpoint({
  operationId: 'listFiles',
  method: 'GET',
  path: '/files',
  family: 'files',
  summary: "Lists the workspace's files.",
  query: {
    ...listQueryFields('desc'),
    // The reference pages files by up to 10,000 (default 10,000), not 100.
    limit: applied(z.coerce.number().int().min(1).max(10_000).default(10_000), 'page size, 1 to 10,000 (default 10,000)'),
    purpose: applied(z.string().min(1).max(64), 'only files with this purpose'),
  },
  response: { schema: listSchema(fileObjectSchema) },
});

export const retrieveFile = defineEndpoint({
  operationId: 'retrieveFile',
  method: 'GET',
  path: '/files/{file_id}',
  family: 'files',
  summary: 'Retrieves one file.',
  params: fileIdParams,
  response: { schema: fileObjectSchema },
});

export const deleteFile = defineEndpoint({
  operationId: 'deleteFile',
  method: 'DELETE',
  path: '/files/{file_id}',
  family: 'files',
  summary: 'Deletes a file.',
  params: fileIdParams,
  response: { schema: deletionSchema('file') },
});

export const downloadFile = defineEndpoint({
  operationId: 'downloadFile',
  method: 'GET',
  path: '/files/{file_id}/content',
  family: 'files',
  summary: "Returns the file's content.",
  params: fileIdParams,
  response: { schema: binaryContentSchema, alternate: 'binary', contentType: 'application/octet-stream' },
});

export const filesEndpoints = [createFile, listFiles, retrieveFile, deleteFile, downloadFile];
