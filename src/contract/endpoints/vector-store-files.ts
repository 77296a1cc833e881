// Vector store files and file batches (SPEC "Containers, vector stores, skills": attributes up to 16,
// 500 files per file batch; indexing is free).
import { z } from 'zod';
import { applied, attributesSchema, deletionSchema, listQueryFields, listSchema, objectId } from '../fields.ts';
import { defineEndpoint } from '../types.ts';
import type { FieldTable } from '../types.ts';
import {
  chunkingStrategySchema,
  vectorStoreFileBatchSchema,
  vectorStoreFileContentSchema,
  vectorStoreFileSchema,
} from './vector-store-schemas.ts';

const MAX_BATCH_FILES = 500;

/** Pagination of the file lists: the shared fields plus the reference's `before` cursor and status `filter`. */
export const vectorStoreListQuery = {
  ...listQueryFields('desc'),
  before: applied(z.string().min(1), 'cursor: the first id of the current page (for the page before it)'),
} as const satisfies FieldTable;
const fileListQuery = {
  ...vectorStoreListQuery,
  filter: applied(z.enum(['in_progress', 'completed', 'failed', 'cancelled']), 'only files with this status'),
} as const satisfies FieldTable;

const storeParams = { vector_store_id: z.string() };
const fileParams = { vector_store_id: z.string(), file_id: z.string() };
const batchParams = { vector_store_id: z.string(), batch_id: z.string() };
const permission = 'file_search' as const;
const family = 'vector-stores';
const ATTRIBUTES_NOTE = 'up to 16 keys (64 characters; values strings up to 512, numbers or booleans), used by search filters';
const CHUNKING_NOTE = 'auto (800 tokens, 400 overlap) or static {max_chunk_size_tokens, chunk_overlap_tokens}';

export const createVectorStoreFile = defineEndpoint({
  operationId: 'createVectorStoreFile',
  method: 'POST',
  path: '/vector_stores/{vector_store_id}/files',
  family,
  summary: 'Adds an uploaded file to a vector store and indexes it.',
  permission,
  params: storeParams,
  body: {
    type: 'json',
    required: ['file_id'],
    fields: {
      file_id: applied(objectId(), 'an uploaded file'),
      attributes: applied(attributesSchema, ATTRIBUTES_NOTE),
      chunking_strategy: applied(chunkingStrategySchema, CHUNKING_NOTE),
    },
  },
  response: { schema: vectorStoreFileSchema },
  notes: [
    'file kinds: text, Markdown, CSV, JSON, HTML, XML, YAML, code, PDF with a text layer, Word .docx',
    'indexing is free',
  ],
});

export const listVectorStoreFiles = defineEndpoint({
  operationId: 'listVectorStoreFiles',
  method: 'GET',
  path: '/vector_stores/{vector_store_id}/files',
  family,
  summary: "Lists a vector store's files.",
  permission,
  params: storeParams,
  query: fileListQuery,
  response: { schema: listSchema(vectorStoreFileSchema) },
});

export const getVectorStoreFile = defineEndpoint({
  operationId: 'getVectorStoreFile',
  method: 'GET',
  path: '/vector_stores/{vector_store_id}/files/{file_id}',
  family,
  summary: 'Retrieves one vector store file.',
  permission,
  params: fileParams,
  response: { schema: vectorStoreFileSchema },
});

export const updateVectorStoreFileAttributes = defineEndpoint({
  operationId: 'updateVectorStoreFileAttributes',
  method: 'POST',
  path: '/vector_stores/{vector_store_id}/files/{file_id}',
  family,
  summary: "Replaces a vector store file's attributes.",
  permission,
  params: fileParams,
  body: {
    type: 'json',
    required: ['attributes'],
    fields: { attributes: applied(attributesSchema, ATTRIBUTES_NOTE) },
  },
  response: { schema: vectorStoreFileSchema },
});

export const deleteVectorStoreFile = defineEndpoint({
  operationId: 'deleteVectorStoreFile',
  method: 'DELETE',
  path: '/vector_stores/{vector_store_id}/files/{file_id}',
  family,
  summary: 'Removes a file from a vector store (the uploaded file stays).',
  permission,
  params: fileParams,
  response: { schema: deletionSchema('vector_store.file.deleted') },
});

export const retrieveVectorStoreFileContent = defineEndpoint({
  operationId: 'retrieveVectorStoreFileContent',
  method: 'GET',
  path: '/vector_stores/{vector_store_id}/files/{file_id}/content',
  family,
  summary: 'Returns the parsed text of a vector store file.',
  permission,
  params: fileParams,
  response: { schema: vectorStoreFileContentSchema },
});

const batchFileSchema = z.object({
  file_id: objectId(),
  attributes: attributesSchema.optional(),
  chunking_strategy: chunkingStrategySchema.optional(),
});

export const createVectorStoreFileBatch = defineEndpoint({
  operationId: 'createVectorStoreFileBatch',
  method: 'POST',
  path: '/vector_stores/{vector_store_id}/file_batches',
  family,
  summary: 'Adds several uploaded files to a vector store at once.',
  permission,
  params: storeParams,
  body: {
    type: 'json',
    fields: {
      file_ids: applied(
        z.array(objectId()).min(1).max(MAX_BATCH_FILES, `at most ${MAX_BATCH_FILES} files per batch`),
        `up to ${MAX_BATCH_FILES}; attributes and chunking_strategy apply to each`,
      ),
      files: applied(
        z.array(batchFileSchema).min(1).max(MAX_BATCH_FILES, `at most ${MAX_BATCH_FILES} files per batch`),
        `up to ${MAX_BATCH_FILES} of {file_id, attributes, chunking_strategy}`,
      ),
      attributes: applied(attributesSchema, `${ATTRIBUTES_NOTE}; applied to every file in file_ids`),
      chunking_strategy: applied(chunkingStrategySchema, `${CHUNKING_NOTE}; applied to every file in file_ids`),
    },
  },
  response: { schema: vectorStoreFileBatchSchema },
  notes: ['send exactly one of file_ids and files', `up to ${MAX_BATCH_FILES} files per batch`, 'indexing is free'],
});

export const getVectorStoreFileBatch = defineEndpoint({
  operationId: 'getVectorStoreFileBatch',
  method: 'GET',
  path: '/vector_stores/{vector_store_id}/file_batches/{batch_id}',
  family,
  summary: 'Retrieves one file batch.',
  permission,
  params: batchParams,
  response: { schema: vectorStoreFileBatchSchema },
});

export const cancelVectorStoreFileBatch = defineEndpoint({
  operationId: 'cancelVectorStoreFileBatch',
  method: 'POST',
  path: '/vector_stores/{vector_store_id}/file_batches/{batch_id}/cancel',
  family,
  summary: 'Cancels a file batch; files not yet indexed are cancelled.',
  permission,
  params: batchParams,
  response: { schema: vectorStoreFileBatchSchema },
});

export const listFilesInVectorStoreBatch = defineEndpoint({
  operationId: 'listFilesInVectorStoreBatch',
  method: 'GET',
  path: '/vector_stores/{vector_store_id}/file_batches/{batch_id}/files',
  family,
  summary: 'Lists the files of a file batch.',
  permission,
  params: batchParams,
  query: fileListQuery,
  response: { schema: listSchema(vectorStoreFileSchema) },
});

export const vectorStoreFilesEndpoints = [
  createVectorStoreFile,
  listVectorStoreFiles,
  getVectorStoreFile,
  updateVectorStoreFileAttributes,
  deleteVectorStoreFile,
  retrieveVectorStoreFileContent,
  createVectorStoreFileBatch,
  getVectorStoreFileBatch,
  cancelVectorStoreFileBatch,
  listFilesInVectorStoreBatch,
];
