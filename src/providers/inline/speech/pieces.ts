// Splits the text to read into the pieces the engine synthesizes one after the other,
// so the first piece's audio goes out while the next is made: sentences (ended by . ! ?
// ; : or a line break), a long one cut at a comma or a space, and a run without spaces
// cut hard. The first piece is kept short (a clause) for an early first byte. Every
// piece holds at most MAX_PIECE characters, which bounds one synthesis.

/** Characters of one piece at most (one synthesis: about a second of CPU at worst). */
export const MAX_PIECE = 240;
/** The first piece at most: its audio is the first byte the client gets. */
export const FIRST_PIECE = 100;

const SENTENCE_END = /[.!?;:\n]+["')\]]*\s+|\n/g;

function cut(text: string, max: number): [string, string] {
  if (text.length <= max) return [text, ''];
  const window = text.slice(0, max);
  // The last comma, else the last space, in the window's second half; else a hard cut.
  const at = Math.max(window.lastIndexOf(', '), window.lastIndexOf('; '));
  const space = window.lastIndexOf(' ');
  const end = at >= max / 2 ? at + 1 : space >= max / 2 ? space : max;
  return [text.slice(0, end), text.slice(end)];
}

/** The pieces of `text`, trimmed, none empty, each at most MAX_PIECE (the first at most FIRST_PIECE) characters. */
export function speechPieces(text: string): string[] {
  const sentences: string[] = [];
  let from = 0;
  for (const m of text.matchAll(SENTENCE_END)) {
    const end = m.index + m[0].length;
    sentences.push(text.slice(from, end));
    from = end;
  }
  sentences.push(text.slice(from));
  const pieces: string[] = [];
  for (const sentence of sentences) {
    let rest = sentence.trim();
    while (rest !== '') {
      const [piece, after] = cut(rest, pieces.length === 0 ? FIRST_PIECE : MAX_PIECE);
      const trimmed = piece.trim();
      if (trimmed !== '') pieces.push(trimmed);
      rest = after.trim();
    }
  }
  return pieces;
}
