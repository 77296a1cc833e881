// Shared schemas of the vector store endpoints (SPEC "Vector store" and "Vector store file" resources).
import { z } from 'zod';
import { attributesSchema, metadataSchema, storedText } from '../fields.ts';

/** `auto` (800-token chunks, 400 overlap) or static sizes. */
export const chunkingStrategySchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('auto') }),
    z.object({
      type: z.literal('static'),
      static: z
        .object({ max_chunk_size_tokens: z.number().int().min(100).max(4096), chunk_overlap_tokens: z.number().int().min(0) })
        .refine((s) => s.chunk_overlap_tokens <= s.max_chunk_size_tokens / 2, {
          message: 'chunk_overlap_tokens may be at most half of max_chunk_size_tokens',
        }),
    }),
  ])
  .meta({ id: 'ChunkingStrategyParam' });

export const vectorStoreExpiresAfterSchema = z.object({
  anchor: z.literal('last_active_at'),
  days: z.number().int().min(1).max(365),
});

export const vectorStoreNameSchema = storedText(256);

const fileCountsSchema = z.looseObject({
  in_progress: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  total: z.number().int(),
});

export const vectorStoreSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('vector_store'),
    created_at: z.number().int(),
    name: z.string().nullable(),
    description: z.string().nullable().optional(),
    usage_bytes: z.number().int(),
    file_counts: fileCountsSchema,
    status: z.enum(['expired', 'in_progress', 'completed']),
    expires_after: z.looseObject({ anchor: z.literal('last_active_at'), days: z.number().int() }).optional(),
    expires_at: z.number().int().nullable().optional(),
    last_active_at: z.number().int().nullable(),
    metadata: metadataSchema,
  })
  .meta({ id: 'VectorStore' });

const fileStatusSchema = z.enum(['in_progress', 'completed', 'cancelled', 'failed']);

export const vectorStoreFileSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('vector_store.file'),
    usage_bytes: z.number().int(),
    created_at: z.number().int(),
    vector_store_id: z.string(),
    status: fileStatusSchema,
    last_error: z.looseObject({ code: z.enum(['server_error', 'unsupported_file', 'invalid_file']), message: z.string() }).nullable(),
    chunking_strategy: z
      .union([
        z.looseObject({
          type: z.literal('static'),
          static: z.looseObject({ max_chunk_size_tokens: z.number().int(), chunk_overlap_tokens: z.number().int() }),
        }),
        z.looseObject({ type: z.literal('other') }),
      ])
      .optional(),
    attributes: attributesSchema.optional(),
  })
  .meta({ id: 'VectorStoreFile' });

export const vectorStoreFileBatchSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('vector_store.files_batch'),
    created_at: z.number().int(),
    vector_store_id: z.string(),
    status: fileStatusSchema,
    file_counts: fileCountsSchema,
  })
  .meta({ id: 'VectorStoreFileBatch' });

export const vectorStoreFileContentSchema = z
  .looseObject({
    object: z.literal('vector_store.file_content.page'),
    data: z.array(z.looseObject({ type: z.string(), text: z.string() })),
    has_more: z.boolean(),
    next_page: z.string().nullable(),
  })
  .meta({ id: 'VectorStoreFileContentPage' });

export const vectorStoreSearchResultsPageSchema = z
  .looseObject({
    object: z.literal('vector_store.search_results.page'),
    search_query: z.array(z.string()),
    data: z.array(
      z.looseObject({
        file_id: z.string(),
        filename: z.string(),
        score: z.number().min(0).max(1),
        attributes: attributesSchema,
        content: z.array(z.looseObject({ type: z.literal('text'), text: z.string() })),
      }),
    ),
    has_more: z.boolean(),
    next_page: z.string().nullable(),
  })
  .meta({ id: 'VectorStoreSearchResultsPage' });
