// `file_citation` annotations of a Responses answer: each [n] marker the model wrote
// that names a passage the file_search tool (tools/file-search) found in this response.
export interface CitedFile {
  file_id: string;
  filename: string;
}

export interface FileCitation extends CitedFile {
  type: 'file_citation';
  /** Where the marker starts in the text, in Unicode code points (as Python and the reference count characters). */
  index: number;
}

/** `[3]`, `[1][2]` and `[1, 2]`: each number of a bracket is cited at the bracket. */
const MARKER = /\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]/g;

/**
 * The file_citation annotations of an answer: one per number in a marker that names a
 * passage found in this response, in text order. The markers stay in the text (a
 * stream has already sent them).
 */
export function fileCitations(text: string, sources: ReadonlyMap<number, CitedFile>): FileCitation[] {
  if (sources.size === 0) return [];
  const out: FileCitation[] = [];
  let codePoints = 0;
  let counted = 0;
  for (const m of text.matchAll(MARKER)) {
    // Code points up to the marker, counted on from the previous one.
    for (const _ of text.slice(counted, m.index)) codePoints++;
    counted = m.index;
    for (const n of m[1]!.split(',')) {
      const file = sources.get(Number(n.trim()));
      if (file) out.push({ type: 'file_citation', file_id: file.file_id, filename: file.filename, index: codePoints });
    }
  }
  return out;
}
