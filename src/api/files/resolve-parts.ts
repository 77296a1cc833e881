// Files that chat messages name by `file_id`, read through the store for the calling
// account, so the provider gets their bytes (as a data URL, which OpenAI-compatible
// servers take as `file_data`) and, for text files, their text (the offline engine reads
// that). An id the account cannot see is refused naming the part, like an unknown one.
import { DocumentError, extractText } from '../../documents/extract-text.ts';
import { invalidRequest } from '../../errors.ts';
import { contentTypeFor, isTextType } from './content-type.ts';
import type { StoredFiles } from './stored-files.ts';

export interface ResolvedFile {
  filename: string;
  /** data:<type>;base64,… */
  dataUrl: string;
  /** The content, when it is UTF-8 text. */
  text?: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `messages[i].content[j].file.file_id` of every user part naming a stored file, by id. */
function fileIds(messages: unknown): Map<string, string> {
  const ids = new Map<string, string>();
  if (!Array.isArray(messages)) return ids;
  messages.forEach((m: any, i) => {
    if (m?.role !== 'user' || !Array.isArray(m.content)) return;
    m.content.forEach((p: any, j: number) => {
      const id = p?.type === 'file' ? p.file?.file_id : undefined;
      if (typeof id === 'string' && !ids.has(id)) ids.set(id, `messages[${i}].content[${j}].file.file_id`);
    });
  });
  return ids;
}

/**
 * Reads every file the conversation names. `maxBytes` bounds them together (they are
 * held in memory for the call): the request body limit, since a file sent inline as
 * `file_data` could not be larger either.
 */
export async function resolveFileParts(messages: unknown, accountId: string, files: StoredFiles, maxBytes: number): Promise<Map<string, ResolvedFile>> {
  return resolveFiles(fileIds(messages), accountId, files, maxBytes);
}

/** Reads the files named (id → the parameter that named it, for the refusal), for any surface. */
export async function resolveFiles(ids: ReadonlyMap<string, string>, accountId: string, files: StoredFiles, maxBytes: number): Promise<Map<string, ResolvedFile>> {
  const resolved = new Map<string, ResolvedFile>();
  let total = 0;
  for (const [id, param] of ids) {
    const read = await files.read(accountId, id, maxBytes - total);
    if (read === undefined) throw invalidRequest(`No file with id '${id}' exists for this account.`, param);
    if (read === 'too_large') {
      throw invalidRequest(`The files a request names by file_id may hold up to ${maxBytes} bytes together; '${id}' goes past that.`, param);
    }
    total += read.content.length;
    const type = contentTypeFor(read.file.filename);
    let text: string | undefined;
    if (isTextType(type)) {
      try {
        text = utf8.decode(read.content);
      } catch {
        // Not UTF-8 after all: bytes only.
      }
    }
    const mime = type.split(';')[0]!;
    resolved.set(id, { filename: read.file.filename, dataUrl: `data:${mime};base64,${read.content.toString('base64')}`, ...(text !== undefined ? { text } : {}) });
  }
  return resolved;
}

/**
 * Gives each PDF among `resolved` its text, for an engine that reads no files (the
 * offline one): parsed on the documents sandbox's workers, so the event loop is not held.
 * A PDF without a text layer, or broken, keeps only its bytes, as before.
 */
export async function addPdfText(resolved: Map<string, ResolvedFile>, signal?: AbortSignal): Promise<void> {
  for (const file of resolved.values()) {
    if (file.text !== undefined || !file.dataUrl.startsWith(PDF_DATA_URL)) continue;
    try {
      file.text = (await extractText({ bytes: Buffer.from(file.dataUrl.slice(PDF_DATA_URL.length), 'base64'), filename: file.filename, ...(signal ? { signal } : {}) })).text;
    } catch (err) {
      if (!(err instanceof DocumentError)) throw err;
    }
  }
}

const PDF_DATA_URL = 'data:application/pdf;base64,';
