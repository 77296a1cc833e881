// POST /responses/compact and the sealed `compaction` item (SPEC "Responses"): the
// context (a stored chain and the input) becomes its user messages plus one item that
// holds a model-written summary and the other items, encrypted and authenticated
// (AES-256-GCM) under the service's secret with the account id as associated data. Only
// this API, for the same account, can read it: a changed byte or another account's item
// fails authentication and is refused naming the input item. Sent back as `input`, the
// item opens into a summary message and the items it holds, so the conversation goes on.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { fromMicro } from '../../accounts/money.ts';
import type { compactConversation } from '../../contract/endpoints/responses.ts';
import type { ChatModel } from '../../contract/models.ts';
import type { BodyOf } from '../../contract/types.ts';
import { estimateInputTokens, Run } from '../../credits/run.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Call } from '../../pipeline/call.ts';
import type { Services } from '../../services.ts';
import type { Database } from '../../store/schema.ts';
import { consume } from '../stream-answer.ts';
import { inputItems, newItemId, type Item } from './items.ts';
import { usageObject, type CompactionSeal, type ResponsesDeps } from './response-call.ts';
import { fileIdsOf, toMessages } from './to-messages.ts';
import { resolveFiles } from '../files/resolve-parts.ts';

export type CompactBody = BodyOf<typeof compactConversation>;

const VERSION = 'v1';
const SECRET_KEY = 'compaction_secret';
/** The summary is a short answer: its output cap. */
const SUMMARY_TOKENS = 512;
const SUMMARIZE = 'Summarize the conversation so far in a few sentences: what was asked, what was answered, and anything still open.';

interface Sealed {
  summary: string;
  items: Item[];
}

/** The service's 32-byte sealing key: from AGENT_API_SECRET, else made once and kept in the database every instance shares. */
export async function sealingKey(db: Kysely<Database>, configured: string | undefined): Promise<Buffer> {
  if (configured) return createHash('sha256').update(`agent-api compaction:${configured}`).digest();
  await db.insertInto('meta').values({ key: SECRET_KEY, value: randomBytes(32).toString('base64') }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const row = await db.selectFrom('meta').select('value').where('key', '=', SECRET_KEY).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}

export class Compaction implements CompactionSeal {
  constructor(private readonly key: Buffer) {}

  seal(accountId: string, content: Sealed): Item {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`${VERSION}:${accountId}`));
    const body = Buffer.concat([cipher.update(JSON.stringify(content), 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    return { type: 'compaction', id: newItemId('compaction'), encrypted_content: `${VERSION}.${sealed}` };
  }

  /** The items a compaction item holds, as the model reads them; a refusal when it is not this account's or was changed. */
  unseal(accountId: string, item: Item, param: string): Item[] {
    const refuse = () => invalidRequest('This compaction item cannot be read: it was changed, or it was made for another account or service.', `${param}.encrypted_content`);
    const text = String(item.encrypted_content ?? '');
    if (!text.startsWith(`${VERSION}.`)) throw refuse();
    const raw = Buffer.from(text.slice(VERSION.length + 1), 'base64url');
    if (raw.length < 29) throw refuse();
    let content: Sealed;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(`${VERSION}:${accountId}`));
      decipher.setAuthTag(raw.subarray(12, 28));
      content = JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as Sealed;
    } catch {
      throw refuse();
    }
    const summary: Item = { type: 'message', id: newItemId('message'), role: 'developer', content: [{ type: 'input_text', text: `Summary of the conversation before this point: ${content.summary}` }] };
    return [summary, ...content.items];
  }
}

/** Compacts a stored chain and the input: its user messages plus one sealed item, billed like a short response. */
export async function compact(services: Services, deps: ResponsesDeps & { compaction: Compaction }, call: Call, body: CompactBody, key: KeyRecord) {
  const accountId = key.accountId;
  let earlier: Item[] = [];
  if (body.previous_response_id) {
    const chain = await deps.stored.chain(accountId, body.previous_response_id);
    if (!chain) throw notFound(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id');
    earlier = chain.items;
  }
  // Earlier compaction items open first, so compacting again keeps what they held.
  const items: Item[] = [];
  const input = inputItems(body.input);
  for (const [list, base] of [[earlier, 'previous items'], [input, 'input']] as const) {
    list.forEach((item, i) => items.push(...(item.type === 'compaction' ? deps.compaction.unseal(accountId, item, `${base}[${i}]`) : [item])));
  }
  if (items.length === 0) throw invalidRequest('There is nothing to compact: send input or previous_response_id.', 'input');
  const userMessages = items.filter((i) => i.type === 'message' && i.role === 'user');
  const rest = items.filter((i) => !(i.type === 'message' && i.role === 'user'));

  const counter = { attachments: 0 };
  const files = await resolveFiles(fileIdsOf(items), accountId, services.files, services.config.bodyLimitBytes);
  const messages = [
    ...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []),
    ...toMessages(items, { files, earlier: new Map() }, 'input', counter),
    { role: 'user' as const, content: SUMMARIZE },
  ];
  const model = body.model as ChatModel;
  const run = await Run.open(services, call, { key, model, input: estimateInputTokens(messages, counter.attachments), maxOutputTokens: SUMMARY_TOKENS });
  const ran = await consume(run, run.signal, async () => {
    let summary = '';
    for await (const p of run.meter(services.engines.for('chat', model).chat({ model, messages, maxTokens: SUMMARY_TOKENS, requestId: call.id }, run.signal))) {
      if (p.type === 'text-delta') summary += p.delta;
    }
    return summary;
  });
  if (!ran) return null;
  return {
    id: newId('resp_'),
    object: 'response.compaction' as const,
    created_at: Math.floor(Date.now() / 1000),
    output: [...userMessages, deps.compaction.seal(accountId, { summary: ran.value, items: rest })],
    usage: usageObject(ran.usage),
    svc: fromMicro(ran.credits),
  };
}
