// POST /responses/input_tokens (SPEC "Responses"): what a response request would send
// the model, estimated without running it and free of charge. About four bytes of text
// a token, plus a fixed amount per message and per image or file, plus the agent's own
// instructions (none today: the service adds no system prompt); the earlier items of a
// previous_response_id chain or a conversation count like the input.
import type { getInputTokenCounts } from '../../contract/endpoints/responses.ts';
import type { BodyOf } from '../../contract/types.ts';
import { invalidRequest, notFound } from '../../errors.ts';
import { inputItems, type Item } from './items.ts';
import type { ResponsesDeps } from './response-call.ts';

export type InputTokensBody = BodyOf<typeof getInputTokenCounts>;

const BYTES_PER_TOKEN = 4;
const PER_MESSAGE = 4;
const PER_ATTACHMENT = 765;
/** What the service itself adds to every conversation it sends (no system prompt of its own). */
const AGENT_INSTRUCTIONS_TOKENS = 0;

const textTokens = (text: string) => Math.ceil(Buffer.byteLength(text) / BYTES_PER_TOKEN);

/** The estimate of one item: its text, a message's fixed amount, each image or file. */
export function itemTokens(item: Item): number {
  let tokens = PER_MESSAGE;
  const walk = (v: unknown): void => {
    if (typeof v === 'string') tokens += textTokens(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const part = v as Record<string, unknown>;
      if (part.type === 'input_image' || part.type === 'input_file' || part.type === 'computer_screenshot') {
        tokens += PER_ATTACHMENT;
        return;
      }
      for (const [k, x] of Object.entries(part)) if (k !== 'id' && k !== 'type' && k !== 'status' && k !== 'call_id') walk(x);
    }
  };
  walk(item);
  return tokens;
}

export async function countInputTokens(deps: ResponsesDeps, accountId: string, body: InputTokensBody): Promise<{ object: 'response.input_tokens'; input_tokens: number }> {
  if (body.previous_response_id && body.conversation) throw invalidRequest('Send previous_response_id or conversation, not both.', 'previous_response_id');
  let earlier: Item[] = [];
  if (body.previous_response_id) {
    const chain = await deps.stored.chain(accountId, body.previous_response_id);
    if (!chain) throw notFound(`Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id');
    earlier = chain.items;
  } else if (body.conversation) {
    const id = typeof body.conversation === 'string' ? body.conversation : body.conversation.id;
    const items = deps.conversations ? await deps.conversations.allItems(accountId, id) : undefined;
    if (!items) throw notFound(`Conversation with id '${id}' not found.`, 'conversation');
    earlier = items;
  }
  let tokens = AGENT_INSTRUCTIONS_TOKENS;
  if (body.instructions) tokens += PER_MESSAGE + textTokens(body.instructions);
  for (const item of [...earlier, ...inputItems(body.input)]) tokens += itemTokens(item);
  if (body.tools?.length) tokens += textTokens(JSON.stringify(body.tools));
  if (body.text?.format && body.text.format.type !== 'text') tokens += textTokens(JSON.stringify(body.text.format));
  return { object: 'response.input_tokens', input_tokens: tokens };
}
