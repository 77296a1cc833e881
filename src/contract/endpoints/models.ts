// Discovery and meta endpoints (SPEC "Discovery and meta").
import { z } from 'zod';
import { defineEndpoint } from '../types.ts';

export const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.string(),
  })
  .meta({ id: 'Model' });

export const listModels = defineEndpoint({
  operationId: 'listModels',
  method: 'GET',
  path: '/models',
  family: 'models',
  summary: 'Lists the models the calling key may use: the chat models, or exactly the models a restricted key names.',
  response: { schema: z.object({ object: z.literal('list'), data: z.array(modelSchema) }) },
});

export const retrieveModel = defineEndpoint({
  operationId: 'retrieveModel',
  method: 'GET',
  path: '/models/{model}',
  family: 'models',
  summary: "Retrieves one model by id; 404 model_not_found for an id the service does not know or the key may not use.",
  params: { model: z.string() },
  response: { schema: modelSchema },
});

export const getCapabilities = defineEndpoint({
  operationId: 'getCapabilities',
  method: 'GET',
  path: '/capabilities',
  family: 'meta',
  summary: 'The machine-readable compatibility contract.',
  response: { schema: z.looseObject({ object: z.literal('capabilities'), contract: z.string(), version: z.string() }) },
});

export const getOpenApi = defineEndpoint({
  operationId: 'getOpenApi',
  method: 'GET',
  path: '/openapi.json',
  family: 'meta',
  summary: 'The OpenAPI 3.1 description of the endpoints this service offers.',
  response: { schema: z.looseObject({ openapi: z.string() }) },
});

export const modelsEndpoints = [listModels, retrieveModel, getCapabilities, getOpenApi];
