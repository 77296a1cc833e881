// Vector store endpoints (SPEC "Containers, vector stores, skills"; Vector store resource: name 256
// characters, 100 file_ids, expiry 1 to 365 days; search 1 to 50 results; indexing and search are free).
import { z } from 'zod';
import { applied, attributeFilterSchema, deletionSchema, listSchema, metadataSchema, noEffect, objectId, refused, storedText } from '../fields.ts';
import { defineEndpoint } from '../types.ts';
import { vectorStoreFilesEndpoints, vectorStoreListQuery } from './vector-store-files.ts';
import {
  chunkingStrategySchema,
  vectorStoreExpiresAfterSchema,
  vectorStoreNameSchema,
  vectorStoreSchema,
  vectorStoreSearchResultsPageSchema,
} from './vector-store-schemas.ts';

const storeParams = { vector_store_id: z.string() };
const permission = 'file_search' as const;
const family = 'vector-stores';
const EXPIRES_NOTE = '{anchor: last_active_at, days: 1 to 365}';
const RANKERS = ['none', 'auto', 'default-2024-11-15'] as const;
/** Each query text is embedded and matched: bounded so a request's work is too. */
const MAX_QUERIES = 20;
const MAX_QUERY_CHARS = 10_000;
const queryText = z.string().min(1).max(MAX_QUERY_CHARS, `a query text is at most ${MAX_QUERY_CHARS} characters`);

export const createVectorStore = defineEndpoint({
  operationId: 'createVectorStore',
  method: 'POST',
  path: '/vector_stores',
  family,
  summary: 'Creates a vector store, optionally indexing uploaded files.',
  permission,
  body: {
    type: 'json',
    fields: {
      name: applied(vectorStoreNameSchema, 'up to 256 characters'),
      // Not named by SPEC; a stored label the service can keep as sent.
      description: applied(storedText(512), 'stored with the vector store (up to 512 characters)'),
      file_ids: applied(z.array(objectId()).max(100, 'at most 100 file_ids at creation'), 'up to 100 uploaded files'),
      expires_after: applied(vectorStoreExpiresAfterSchema, EXPIRES_NOTE),
      chunking_strategy: applied(
        chunkingStrategySchema,
        'auto (800 tokens, 400 overlap) or static {max_chunk_size_tokens, chunk_overlap_tokens}; for file_ids',
      ),
      metadata: applied(metadataSchema, 'see Conventions'),
    },
  },
  response: { schema: vectorStoreSchema },
  notes: [
    "embedding by the service's own model (384 dimensions, 512 tokens a chunk); indexing and search are free",
    "each account's search index holds up to 500 MB of passages and vectors",
    'expires after expires_after days from last activity (1 to 365)',
  ],
});

export const listVectorStores = defineEndpoint({
  operationId: 'listVectorStores',
  method: 'GET',
  path: '/vector_stores',
  family,
  summary: "Lists the account's vector stores.",
  permission,
  query: vectorStoreListQuery,
  response: { schema: listSchema(vectorStoreSchema) },
});

export const getVectorStore = defineEndpoint({
  operationId: 'getVectorStore',
  method: 'GET',
  path: '/vector_stores/{vector_store_id}',
  family,
  summary: 'Retrieves one vector store.',
  permission,
  params: storeParams,
  response: { schema: vectorStoreSchema },
});

export const modifyVectorStore = defineEndpoint({
  operationId: 'modifyVectorStore',
  method: 'POST',
  path: '/vector_stores/{vector_store_id}',
  family,
  summary: "Updates a vector store's name, expiry or metadata.",
  permission,
  params: storeParams,
  body: {
    type: 'json',
    fields: {
      name: applied(vectorStoreNameSchema.nullable(), 'up to 256 characters'),
      expires_after: applied(vectorStoreExpiresAfterSchema.nullable(), `${EXPIRES_NOTE}; null removes the expiry`),
      metadata: applied(metadataSchema, 'see Conventions'),
    },
  },
  response: { schema: vectorStoreSchema },
});

export const deleteVectorStore = defineEndpoint({
  operationId: 'deleteVectorStore',
  method: 'DELETE',
  path: '/vector_stores/{vector_store_id}',
  family,
  summary: 'Deletes a vector store (its uploaded files stay).',
  permission,
  params: storeParams,
  response: { schema: deletionSchema('vector_store.deleted') },
});

export const searchVectorStore = defineEndpoint({
  operationId: 'searchVectorStore',
  method: 'POST',
  path: '/vector_stores/{vector_store_id}/search',
  family,
  summary: 'Searches a vector store for passages relevant to a query.',
  permission,
  params: storeParams,
  body: {
    type: 'json',
    required: ['query'],
    fields: {
      query: applied(
        z.union([queryText, z.array(queryText).min(1).max(MAX_QUERIES, `query holds at most ${MAX_QUERIES} texts`)]),
        `text, or a list of up to ${MAX_QUERIES} texts searched together; each up to ${MAX_QUERY_CHARS} characters`,
      ),
      max_num_results: applied(z.number().int().min(1).max(50).default(10), '1 to 50 (default 10)'),
      filters: applied(attributeFilterSchema, 'attribute filters: eq, ne, gt, gte, lt, lte, in, nin, combined with and / or'),
      ranking_options: applied(
        z.looseObject({ score_threshold: z.number().min(0).max(1).optional(), ranker: z.enum(RANKERS).optional() }),
        'score_threshold 0 to 1 drops weaker results',
      ),
      'ranking_options.ranker': noEffect('results are ranked by the service', z.enum(RANKERS)),
      'ranking_options.hybrid_search': refused('hybrid search weights are not offered'),
      rewrite_query: noEffect('the query is searched as sent', z.boolean()),
    },
  },
  response: { schema: vectorStoreSearchResultsPageSchema },
  notes: ['search is free'],
});

export const vectorStoresEndpoints = [
  createVectorStore,
  listVectorStores,
  getVectorStore,
  modifyVectorStore,
  deleteVectorStore,
  searchVectorStore,
  ...vectorStoreFilesEndpoints,
];
