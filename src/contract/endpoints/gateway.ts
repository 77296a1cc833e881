// The gateway root (SPEC "Sibling surfaces", the gateway paragraph): endpoints forwarded
// unchanged to the upstream aggregator, and the few the service answers itself in the
// aggregator's shapes (money in dollars). Forwarded bodies are not classified: the
// upstream judges them, so their tables hold no fields (the root's bodies are raw).
import { z } from 'zod';
import { defineEndpoint, type EndpointContract } from '../types.ts';

const passthrough = (description: string) => ({ schema: z.looseObject({}), description });

/** One forwarded endpoint: method, path and body are sent as they came. */
function forwarded<const T extends Omit<EndpointContract, 'family' | 'response'> & { response?: EndpointContract['response'] }>(c: T) {
  return defineEndpoint({
    family: 'gateway',
    passthrough: true,
    response: passthrough("The upstream's answer, status, body and headers as it sent them (a stream as its bytes arrive)."),
    ...c,
    notes: ['Forwarded unchanged to the upstream aggregator: the body is not classified, the upstream judges it.', ...(c.notes ?? [])],
  });
}

export const gatewayChat = forwarded({
  operationId: 'gatewayChatCompletions',
  method: 'POST',
  path: '/chat/completions',
  summary: 'A chat completion from the upstream aggregator, whole or streamed, forwarded unchanged; credits are reserved for its input and output cap and settled to the cost the upstream reports.',
  billable: true,
});

export const gatewayCompletions = forwarded({
  operationId: 'gatewayCompletions',
  method: 'POST',
  path: '/completions',
  summary: 'A text completion from the upstream aggregator, forwarded unchanged.',
  billable: true,
});

export const gatewayEmbeddings = forwarded({
  operationId: 'gatewayEmbeddings',
  method: 'POST',
  path: '/embeddings',
  summary: 'Embeddings from the upstream aggregator, forwarded unchanged (the key\'s Embeddings switch).',
  permission: 'embeddings',
  billable: true,
});

export const gatewaySpeech = forwarded({
  operationId: 'gatewaySpeech',
  method: 'POST',
  path: '/audio/speech',
  summary: "Speech from the upstream aggregator: its audio bytes as they arrive (the key's Audio switch).",
  permission: 'audio',
  billable: true,
});

export const gatewayTranscriptions = forwarded({
  operationId: 'gatewayTranscriptions',
  method: 'POST',
  path: '/audio/transcriptions',
  summary: "A transcription from the upstream aggregator, in its shape (a JSON body with base64 `input_audio`) (the key's Audio switch).",
  permission: 'audio',
  billable: true,
});

export const gatewayImages = forwarded({
  operationId: 'gatewayImages',
  method: 'POST',
  path: '/images',
  summary: "Images from the upstream aggregator (the key's Image generation switch).",
  permission: 'image_generation',
  billable: true,
});

export const gatewayImagesBelow = forwarded({
  operationId: 'gatewayImagesOperation',
  method: 'POST',
  path: '/images/{operation}',
  summary: "An image operation of the upstream aggregator (e.g. /images/generations) (the key's Image generation switch).",
  params: { operation: z.string().min(1).max(64) },
  permission: 'image_generation',
  billable: true,
});

export const gatewayModels = forwarded({
  operationId: 'gatewayListModels',
  method: 'GET',
  path: '/models',
  summary: "The upstream aggregator's models, with their `pricing` in dollars per token, forwarded unchanged (query included).",
});

export const gatewayModelEndpoints = forwarded({
  operationId: 'gatewayListModelEndpoints',
  method: 'GET',
  path: '/models/{author}/{slug}/endpoints',
  summary: "The upstream's endpoints (providers) of one model, forwarded unchanged.",
  params: { author: z.string().min(1).max(256), slug: z.string().min(1).max(256) },
});

/** The aggregator's period names for a key limit's reset. */
export const LIMIT_RESETS = ['daily', 'weekly', 'monthly'] as const;

const keyInfo = z
  .looseObject({
    label: z.string().describe("The key's name (never its secret)."),
    limit: z.number().nullable().describe("The key's spend or credit cap in dollars, the tightest if several; null when it has none."),
    limit_remaining: z.number().nullable(),
    limit_reset: z.enum(LIMIT_RESETS).nullable().describe('When the limit resets (UTC periods); null for a lifetime limit or none.'),
    include_byok_in_limit: z.boolean(),
    usage: z.number().describe('Dollars charged for the key\'s requests, ever.'),
    usage_daily: z.number(),
    usage_weekly: z.number(),
    usage_monthly: z.number(),
    byok_usage: z.number(),
    byok_usage_daily: z.number(),
    byok_usage_weekly: z.number(),
    byok_usage_monthly: z.number(),
    is_free_tier: z.literal(false),
    is_management_key: z.boolean(),
    is_provisioning_key: z.boolean(),
    creator_user_id: z.string().nullable(),
    expires_at: z.string().nullable().describe('RFC 3339, or null.'),
    rate_limit: z.looseObject({ requests: z.number().int(), interval: z.string(), note: z.string() }),
    allowed_data_regions: z.array(z.string()),
    free_model_daily_requests: z.looseObject({ limit: z.number().int(), remaining: z.number().int(), used: z.number().int() }),
    organization_id: z.string().nullable(),
    workspace_id: z.string().nullable(),
  })
  .meta({ id: 'GatewayKeyInfo' });

export const gatewayKey = defineEndpoint({
  operationId: 'gatewayGetCurrentKey',
  method: 'GET',
  path: '/key',
  family: 'gateway',
  summary: "The calling key's limits and usage in dollars, as settled, on its caps' UTC periods.",
  response: { schema: z.looseObject({ data: keyInfo }) },
});

export const gatewayCredits = defineEndpoint({
  operationId: 'gatewayGetCredits',
  method: 'GET',
  path: '/credits',
  family: 'gateway',
  summary: "The account's credits in dollars: everything granted, and everything charged; their difference is the balance.",
  response: { schema: z.looseObject({ data: z.looseObject({ total_credits: z.number(), total_usage: z.number() }) }) },
});

const generation = z
  .looseObject({
    id: z.string().describe("The upstream's generation id (our request id for a request it never answered)."),
    upstream_id: z.string().nullable(),
    request_id: z.string(),
    model: z.string(),
    created_at: z.string(),
    total_cost: z.number().describe('Dollars the account was charged.'),
    usage: z.number(),
    tokens_prompt: z.number().int(),
    tokens_completion: z.number().int(),
    streamed: z.boolean(),
    cancelled: z.boolean(),
    finish_reason: z.string().nullable(),
    latency: z.number().int(),
    generation_time: z.number().int().nullable(),
    origin: z.string(),
    api_type: z.string().nullable(),
  })
  .meta({ id: 'GatewayGeneration' });

export const gatewayGeneration = defineEndpoint({
  operationId: 'gatewayGetGeneration',
  method: 'GET',
  path: '/generation',
  family: 'gateway',
  summary: "Cost and tokens of one of the calling key's own requests, by the upstream's generation id (or our request id); another key's is a 404, as an unknown one.",
  query: { id: { category: 'applied', schema: z.string().min(1).max(256), note: 'the generation id (`gen-...` from the answer or X-Generation-Id), or the request id' } },
  response: { schema: z.looseObject({ data: generation }) },
});

export const getGatewayOpenApi = defineEndpoint({
  operationId: 'gatewayGetOpenApi',
  method: 'GET',
  path: '/openapi.json',
  family: 'meta',
  summary: 'The OpenAPI 3.1 description of the gateway.',
  response: { schema: z.looseObject({ openapi: z.string() }) },
});

export const gatewayForwarded = [gatewayChat, gatewayCompletions, gatewayEmbeddings, gatewaySpeech, gatewayTranscriptions, gatewayImages, gatewayImagesBelow, gatewayModels, gatewayModelEndpoints] as const;

export const gatewayEndpoints = [...gatewayForwarded, gatewayKey, gatewayCredits, gatewayGeneration, getGatewayOpenApi] as const;
