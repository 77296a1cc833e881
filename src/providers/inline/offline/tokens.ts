// Real o200k token counts of a conversation, and token-by-token pieces of a text.
// Counting and encoding go through text/tokenizer.ts (bounded work per turn of the
// event loop); gpt-tokenizer is imported here only to read token bytes back.
import o200k, { decodeGenerator } from 'gpt-tokenizer/encoding/o200k_base';
import { encodeLazily, encodeText, TokenCounter } from '../../../text/tokenizer.ts';
import type { ChatMessage, FunctionTool } from '../../types.ts';

export { countTokens, encodeText } from '../../../text/tokenizer.ts';

// --- Input counting -------------------------------------------------------

/** Like OpenAI's cookbook: 3 tokens per message frame, 3 to prime the reply. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
/** Fixed estimates for parts the engine does not read as text. */
const IMAGE_TOKENS = { low: 85, other: 765 };
const FILE_OR_AUDIO_TOKENS = 50;

/** Input tokens of a chat; asynchronous, so a 10 MB conversation never holds the event loop. */
export async function countChatTokens(messages: readonly ChatMessage[], tools: readonly FunctionTool[] = [], counter = new TokenCounter()): Promise<number> {
  let total = REPLY_PRIMING;
  const count = (text: string): Promise<number> => counter.add(text);
  for (const m of messages) {
    total += PER_MESSAGE;
    if ('name' in m && m.name) total += 1 + (await count(m.name));
    if (typeof m.content === 'string') total += await count(m.content);
    else if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (part.type === 'text') total += await count(part.text);
        else if (part.type === 'image_url') total += part.detail === 'low' ? IMAGE_TOKENS.low : IMAGE_TOKENS.other;
        else if (part.type === 'file') total += FILE_OR_AUDIO_TOKENS + (part.filename ? await count(part.filename) : 0) + (part.text !== undefined ? await count(part.text) : 0);
        else total += FILE_OR_AUDIO_TOKENS;
      }
    }
    if (m.role === 'assistant' && m.tool_calls) {
      for (const call of m.tool_calls) total += PER_MESSAGE + (await count(call.name)) + (await count(call.arguments));
    }
  }
  for (const tool of tools) {
    total += PER_MESSAGE + (await count(tool.name)) + (await count(tool.description ?? ''));
    if (tool.parameters) total += await count(JSON.stringify(tool.parameters));
  }
  return total;
}

// --- Pieces ---------------------------------------------------------------

/**
 * One streamed unit: normally one token. A character whose UTF-8 bytes are
 * split over several tokens (emoji, some CJK) becomes one piece holding all
 * of them, so no event ever carries a broken string.
 */
export interface Piece {
  text: string;
  tokenIds: number[];
}

type RankEntry = string | readonly number[] | undefined;

/**
 * gpt-tokenizer keeps each token's text or raw bytes in a table it does not
 * export. Reading it is the only way to get exact per-token bytes without
 * re-decoding; if a future version moves it, `fallbackPieces` still works.
 */
const rankTable: readonly RankEntry[] | undefined = (() => {
  const core = (o200k as unknown as { bytePairEncodingCoreProcessor?: { bytePairRankDecoder?: unknown } })
    .bytePairEncodingCoreProcessor;
  const table = core?.bytePairRankDecoder;
  if (!Array.isArray(table)) return undefined;
  const probe = encodeText(' hello');
  return probe.length === 1 && table[probe[0] as number] === ' hello' ? (table as RankEntry[]) : undefined;
})();

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/** True when `bytes` does not end inside a multi-byte UTF-8 sequence. */
export function endsOnCharBoundary(bytes: readonly number[]): boolean {
  for (let back = 1; back <= 4 && back <= bytes.length; back++) {
    const b = bytes[bytes.length - back] as number;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return back >= need;
  }
  return true;
}

function entryBytes(entry: RankEntry, id: number): number[] {
  if (typeof entry === 'string') return Array.from(utf8.encode(entry));
  if (entry) return Array.from(entry);
  return Array.from(utf8.encode(o200k.decode([id])));
}

function tablePieces(ids: readonly number[], table: readonly RankEntry[]): Piece[] {
  const pieces: Piece[] = [];
  let pendingIds: number[] = [];
  let pendingBytes: number[] = [];
  for (const id of ids) {
    const entry = table[id];
    if (typeof entry === 'string' && pendingIds.length === 0) {
      pieces.push({ text: entry, tokenIds: [id] }); // the common, allocation-light path
      continue;
    }
    pendingIds.push(id);
    for (const b of entryBytes(entry, id)) pendingBytes.push(b);
    if (endsOnCharBoundary(pendingBytes)) {
      pieces.push({ text: utf8Decoder.decode(Uint8Array.from(pendingBytes)), tokenIds: pendingIds });
      pendingIds = [];
      pendingBytes = [];
    }
  }
  if (pendingIds.length > 0) pieces.push({ text: utf8Decoder.decode(Uint8Array.from(pendingBytes)), tokenIds: pendingIds });
  return pieces;
}

/**
 * Public-API path: decodeGenerator pulls one token at a time and yields only
 * complete text, so counting the pulls tells which tokens each piece holds.
 */
export function fallbackPieces(ids: readonly number[]): Piece[] {
  let pulled = 0;
  const counting = {
    *[Symbol.iterator](): Generator<number> {
      for (const id of ids) {
        pulled++;
        yield id;
      }
    },
  };
  const pieces: Piece[] = [];
  let start = 0;
  for (const text of decodeGenerator(counting)) {
    pieces.push({ text, tokenIds: ids.slice(start, pulled) });
    start = pulled;
  }
  return pieces;
}

/**
 * The pieces of a text, encoded only as they are pulled: a stream that stops at its
 * token budget never tokenizes the rest, and no pull encodes more than a small chunk.
 */
export function* pieces(text: string, useTable = rankTable !== undefined): Generator<Piece> {
  for (const ids of encodeLazily(text)) yield* useTable && rankTable ? tablePieces(ids, rankTable) : fallbackPieces(ids);
}

export function toPieces(text: string, useTable = rankTable !== undefined): Piece[] {
  return [...pieces(text, useTable)];
}

/** Token text and bytes for logprobs; partial-character tokens read as `bytes:\xe2\x80`. */
export interface TokenDetail {
  token: string;
  bytes: number[];
}

export function pieceTokenDetails(piece: Piece): TokenDetail[] {
  if (piece.tokenIds.length === 1 || !rankTable) {
    // Without the table, a multi-token piece is reported as one entry.
    return [{ token: piece.text, bytes: Array.from(utf8.encode(piece.text)) }];
  }
  return piece.tokenIds.map((id) => {
    const entry = rankTable[id];
    if (typeof entry === 'string') return { token: entry, bytes: Array.from(utf8.encode(entry)) };
    const bytes = entryBytes(entry, id);
    return { token: 'bytes:' + bytes.map((b) => '\\x' + b.toString(16).padStart(2, '0')).join(''), bytes };
  });
}

export function utf8Bytes(text: string): number[] {
  return Array.from(utf8.encode(text));
}

export const hasRankTable = rankTable !== undefined;
