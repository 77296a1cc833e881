// Conversations: containers of Responses items (SPEC "Conversation", "Conversations").
import { z } from 'zod';
import { applied, deletionSchema, limitedEach, listQueryFields, listSchema, metadataSchema } from '../fields.ts';
import { defineEndpoint } from '../types.ts';
import { responseInputItemSchema, responseItemSchema } from './responses-items.ts';
import { CONVERSATION_INCLUDE_VALUES } from './responses-tools.ts';

/** SPEC Limits: 20 items per create or add. */
const MAX_ITEMS = 20;

export const conversationSchema = z
  .looseObject({
    id: z.string().meta({ description: 'starts conv_' }),
    object: z.literal('conversation'),
    created_at: z.number().int(),
    metadata: metadataSchema,
  })
  .meta({ id: 'Conversation' });

const includeRule = limitedEach(CONVERSATION_INCLUDE_VALUES, 'each entry one of these');

const conversationIdParam = { conversation_id: z.string().meta({ description: 'a conversation id (conv_...)' }) };
const itemParams = { ...conversationIdParam, item_id: z.string() };

export const createConversation = defineEndpoint({
  operationId: 'createConversation',
  method: 'POST',
  path: '/conversations',
  family: 'conversations',
  summary: 'Creates a conversation, optionally with initial items and metadata.',
  body: {
    type: 'json',
    fields: {
      items: applied(
        z.array(responseInputItemSchema).max(MAX_ITEMS, `a conversation is created with at most ${MAX_ITEMS} items`).nullable(),
        `up to ${MAX_ITEMS} initial items`,
      ),
      metadata: applied(metadataSchema, 'up to 16 entries; keys up to 64 characters, values up to 512'),
    },
  },
  response: { schema: conversationSchema },
  notes: ['Continue a conversation through the conversation parameter of POST /responses: the response\'s input and output are appended to it.'],
});

export const getConversation = defineEndpoint({
  operationId: 'getConversation',
  method: 'GET',
  path: '/conversations/{conversation_id}',
  family: 'conversations',
  summary: 'Retrieves a conversation.',
  params: conversationIdParam,
  response: { schema: conversationSchema },
});

export const updateConversation = defineEndpoint({
  operationId: 'updateConversation',
  method: 'POST',
  path: '/conversations/{conversation_id}',
  family: 'conversations',
  summary: "Replaces a conversation's metadata.",
  params: conversationIdParam,
  body: {
    type: 'json',
    required: ['metadata'],
    fields: { metadata: applied(metadataSchema, 'replaces the stored metadata') },
  },
  response: { schema: conversationSchema },
});

export const deleteConversation = defineEndpoint({
  operationId: 'deleteConversation',
  method: 'DELETE',
  path: '/conversations/{conversation_id}',
  family: 'conversations',
  summary: 'Deletes a conversation and its items.',
  params: conversationIdParam,
  response: { schema: deletionSchema('conversation.deleted') },
});

export const createConversationItems = defineEndpoint({
  operationId: 'createConversationItems',
  method: 'POST',
  path: '/conversations/{conversation_id}/items',
  family: 'conversations',
  summary: 'Adds items to a conversation.',
  params: conversationIdParam,
  query: { include: includeRule },
  body: {
    type: 'json',
    required: ['items'],
    fields: {
      items: applied(
        z.array(responseInputItemSchema).min(1).max(MAX_ITEMS, `at most ${MAX_ITEMS} items per call`),
        `1 to ${MAX_ITEMS} items`,
      ),
    },
  },
  response: { schema: listSchema(responseItemSchema), description: 'The items added.' },
});

export const listConversationItems = defineEndpoint({
  operationId: 'listConversationItems',
  method: 'GET',
  path: '/conversations/{conversation_id}/items',
  family: 'conversations',
  summary: 'Lists the items of a conversation.',
  params: conversationIdParam,
  query: { ...listQueryFields('desc'), include: includeRule },
  response: { schema: listSchema(responseItemSchema) },
});

export const getConversationItem = defineEndpoint({
  operationId: 'getConversationItem',
  method: 'GET',
  path: '/conversations/{conversation_id}/items/{item_id}',
  family: 'conversations',
  summary: 'Retrieves one item of a conversation.',
  params: itemParams,
  query: { include: includeRule },
  response: { schema: responseItemSchema },
});

export const deleteConversationItem = defineEndpoint({
  operationId: 'deleteConversationItem',
  method: 'DELETE',
  path: '/conversations/{conversation_id}/items/{item_id}',
  family: 'conversations',
  summary: 'Deletes one item of a conversation.',
  params: itemParams,
  // The reference answers with the conversation the item was removed from.
  response: { schema: conversationSchema, description: 'The conversation.' },
});

export const conversationsEndpoints = [
  createConversation,
  getConversation,
  updateConversation,
  deleteConversation,
  createConversationItems,
  listConversationItems,
  getConversationItem,
  deleteConversationItem,
];
