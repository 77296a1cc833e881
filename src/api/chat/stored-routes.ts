// GET/POST/DELETE /chat/completions/... for stored completions (SPEC "Chat completions").
// The contract has checked query and body; an id the key's account cannot see (unknown,
// another account's, expired) is 404 model_not_found, the same for all three.
import { pageOptions } from '../list-page.ts';
import {
  deleteChatCompletion,
  getChatCompletion,
  getChatCompletionMessages,
  listChatCompletions,
  updateChatCompletion,
} from '../../contract/endpoints/chat.ts';
import { notFound } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import type { Metadata, PageOptions, StoredCompletions } from './stored-completions.ts';

const missing = (id: string) => notFound(`No chat completion found with id '${id}'.`, 'completion_id');

function found<T>(value: T | undefined, id: string): T {
  if (value === undefined) throw missing(id);
  return value;
}

/** The shared list fields; the contract spreads them as a generic table, so they arrive untyped. */
export function storedChatRoutes(router: Router, stored: StoredCompletions): void {
  router.endpoint(listChatCompletions, async ({ query, key }) =>
    stored.list(key.accountId, {
      ...pageOptions(query),
      ...(query.model !== undefined ? { model: query.model } : {}),
      metadata: (query.metadata as Metadata | null | undefined) ?? null,
    }),
  );

  router.endpoint(getChatCompletion, async ({ params, key }) => found(await stored.get(key.accountId, params.completion_id!), params.completion_id!));

  router.endpoint(updateChatCompletion, async ({ params, body, key }) =>
    found(await stored.updateMetadata(key.accountId, params.completion_id!, (body.metadata as Metadata | null | undefined) ?? null), params.completion_id!),
  );

  router.endpoint(deleteChatCompletion, async ({ params, key }) => found(await stored.delete(key.accountId, params.completion_id!), params.completion_id!));

  router.endpoint(getChatCompletionMessages, async ({ params, query, key }) =>
    found(await stored.listMessages(key.accountId, params.completion_id!, pageOptions(query)), params.completion_id!),
  );
}
