// Cuts a document's text into overlapping token windows (SPEC "Vector store":
// `chunking_strategy` auto = 800 tokens with 400 overlap, or static sizes). Windows are
// built from the tokenizer's pieces (tokenPieces), so no token is decoded and no
// character is cut; a window holds at most max tokens unless one piece alone is larger.
import { tokenPieces } from '../text/tokenizer.ts';

export interface Chunking {
  max_chunk_size_tokens: number;
  chunk_overlap_tokens: number;
}

export const AUTO_CHUNKING: Chunking = { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 };

export interface Chunk {
  text: string;
  tokens: number;
  /** Leading characters repeated from the previous chunk (its overlap). */
  overlapChars: number;
}

/** `auto` or a static strategy as the API takes it → the sizes. */
export function chunkingOf(strategy: { type: string; static?: Chunking } | null | undefined): Chunking {
  return strategy?.type === 'static' && strategy.static
    ? { max_chunk_size_tokens: strategy.static.max_chunk_size_tokens, chunk_overlap_tokens: strategy.static.chunk_overlap_tokens }
    : AUTO_CHUNKING;
}

export async function* chunkText(text: string, chunking: Chunking): AsyncGenerator<Chunk> {
  const max = chunking.max_chunk_size_tokens;
  const overlap = Math.min(chunking.chunk_overlap_tokens, Math.floor(max / 2));
  let window: { text: string; tokens: number }[] = [];
  let tokens = 0;
  let overlapChars = 0;
  let emitted = false;
  const emit = (): Chunk => ({ text: window.map((p) => p.text).join(''), tokens, overlapChars: emitted ? overlapChars : 0 });
  for await (const piece of tokenPieces(text)) {
    if (tokens + piece.tokens > max && window.length > 0) {
      const chunk = emit();
      if (chunk.text.trim()) {
        yield chunk;
        emitted = true;
      }
      // Keep the last pieces worth `overlap` tokens as the next window's start.
      let kept = 0;
      let from = window.length;
      while (from > 0 && kept + window[from - 1]!.tokens <= overlap) kept += window[--from]!.tokens;
      window = window.slice(from);
      tokens = kept;
      overlapChars = window.reduce((n, p) => n + p.text.length, 0);
    }
    window.push(piece);
    tokens += piece.tokens;
  }
  if (window.length > 0) {
    const chunk = emit();
    if (chunk.text.trim()) yield chunk;
  }
}
