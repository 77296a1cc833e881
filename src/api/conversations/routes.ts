// The Conversations endpoints (SPEC "Conversations"). The contract has checked fields
// and limits (20 items per create or add, `include` values); an id the key's account
// cannot see is 404, the same for the conversation and its items.
import {
  createConversation,
  createConversationItems,
  deleteConversation,
  deleteConversationItem,
  getConversation,
  getConversationItem,
  listConversationItems,
  updateConversation,
} from '../../contract/endpoints/conversations.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import type { Conversations, Metadata } from './conversations-store.ts';
import { forListing } from '../responses/items.ts';

const missing = (id: string) => notFound(`No conversation found with id '${id}'.`, 'conversation_id');
const missingItem = (id: string) => notFound(`No item found with id '${id}' in this conversation.`, 'item_id');

function found<T>(value: T | undefined, error: () => Error): T {
  if (value === undefined) throw error();
  return value;
}

export function conversationsRoutes(router: Router, conversations: Conversations): void {
  router.endpoint(createConversation, async ({ body, key }) =>
    conversations.create(key.accountId, { items: body.items as Record<string, unknown>[] | null | undefined, metadata: (body.metadata as Metadata | null | undefined) ?? null }),
  );

  router.endpoint(getConversation, async ({ params, key }) => found(await conversations.get(key.accountId, params.conversation_id!), () => missing(params.conversation_id!)));

  router.endpoint(updateConversation, async ({ params, body, key }) =>
    found(await conversations.updateMetadata(key.accountId, params.conversation_id!, (body.metadata as Metadata | null | undefined) ?? null), () => missing(params.conversation_id!)),
  );

  router.endpoint(deleteConversation, async ({ params, key }) => {
    if (!(await conversations.delete(key.accountId, params.conversation_id!))) throw missing(params.conversation_id!);
    return { id: params.conversation_id!, object: 'conversation.deleted', deleted: true };
  });

  router.endpoint(createConversationItems, async ({ params, body, key }) => {
    const added = found(await conversations.addItems(key.accountId, params.conversation_id!, body.items as Record<string, unknown>[]), () => missing(params.conversation_id!));
    return { object: 'list', data: added, first_id: added[0]?.id ?? null, last_id: added.at(-1)?.id ?? null, has_more: false };
  });

  router.endpoint(listConversationItems, async ({ params, query, key }) => {
    const page = await conversations.listItems(key.accountId, params.conversation_id!, {
      ...(typeof query.limit === 'number' ? { limit: query.limit } : {}),
      ...(typeof query.after === 'string' ? { after: query.after } : {}),
      ...(query.order === 'asc' || query.order === 'desc' ? { order: query.order } : {}),
    });
    if (page === 'unknown_after') throw invalidRequest(`No item with id '${String(query.after)}' in this conversation.`, 'after');
    const listed = found(page, () => missing(params.conversation_id!));
    return { ...listed, data: forListing(listed.data, query.include as string[] | undefined) };
  });

  router.endpoint(getConversationItem, async ({ params, query, key }) => {
    if (!(await conversations.get(key.accountId, params.conversation_id!))) throw missing(params.conversation_id!);
    const item = found(await conversations.getItem(key.accountId, params.conversation_id!, params.item_id!), () => missingItem(params.item_id!));
    return forListing([item], query.include as string[] | undefined)[0]!;
  });

  router.endpoint(deleteConversationItem, async ({ params, key }) => {
    if (!(await conversations.get(key.accountId, params.conversation_id!))) throw missing(params.conversation_id!);
    return found(await conversations.deleteItem(key.accountId, params.conversation_id!, params.item_id!), () => missingItem(params.item_id!));
  });
}
