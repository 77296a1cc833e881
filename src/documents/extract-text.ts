// An uploaded file's bytes turned into plain text for a vector store to chunk and embed.
// It knows nothing of HTTP or the database. The name's extension gives the kind; the
// content must agree where that is cheap to see (a PDF starts with %PDF-, a .docx is a
// ZIP holding word/document.xml, text is UTF-8 without NUL). Text files are decoded
// here; PDF, Word, HTML, XML and JSON are parsed on the sandbox's worker threads. Every
// text is normalised the same way (plain-text.ts). A file that cannot become text is a
// DocumentError, whose code says why and whose message names the file.
import { DocumentError } from './document-error.ts';
import { documentKind, fileExtension, SUPPORTED_KINDS_TEXT, type DocumentKind } from './kinds.ts';
import type { ParsedFormat } from './parsers.ts';
import { decodeText, MAX_TEXT_BYTES, normalizeText } from './plain-text.ts';
import { Sandbox } from './sandbox.ts';

export { DocumentError, type DocumentErrorCode } from './document-error.ts';
export { documentKind, SUPPORTED_EXTENSIONS, type DocumentKind } from './kinds.ts';
export { MAX_TEXT_BYTES } from './plain-text.ts';

export interface ExtractTextInput {
  bytes: Uint8Array;
  /** The uploaded name: its extension decides the kind. */
  filename: string;
  /** Stops the work; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface ExtractedText {
  /** Normalised: \n line breaks, paragraphs split by one blank line, no trailing spaces. */
  text: string;
  kind: DocumentKind;
}

/** How a message names each kind of text file. */
const TEXT_LABEL: Readonly<Record<Exclude<DocumentKind, 'pdf' | 'docx' | 'html' | 'xml' | 'json'>, string>> = {
  text: 'text',
  markdown: 'Markdown',
  csv: 'CSV',
  yaml: 'YAML',
  code: 'source code',
};

let shared: Sandbox | undefined;

/**
 * The plain text of a file. Throws DocumentError: `unsupported_file` for a kind not
 * read, `invalid_file` for a broken file, one whose content is not what its name says,
 * or one over a limit (20 MB of text, 2000 PDF pages, a .docx whose XML inflates past
 * 16 MB, 60 s of parsing, the parser's memory: sandbox.ts), `empty_file` for a file
 * without text (a PDF without a text layer included).
 */
export async function extractText(input: ExtractTextInput): Promise<ExtractedText> {
  const { bytes, filename, signal } = input;
  const sandbox = (shared ??= new Sandbox());
  signal?.throwIfAborted();
  const kind = documentKind(filename);
  if (kind === null) {
    const ext = fileExtension(filename);
    const what = ext === '' ? 'has no extension, so its kind is unknown' : `is of a kind that is not read (.${ext.slice(0, 20)})`;
    throw DocumentError.about('unsupported_file', filename, `${what}. Supported: ${SUPPORTED_KINDS_TEXT}.`);
  }
  if (bytes.length === 0) throw DocumentError.about('empty_file', filename, 'is empty.');

  let raw: string;
  switch (kind) {
    case 'pdf':
      if (!startsWith(bytes, PDF_MAGIC)) throw DocumentError.about('invalid_file', filename, 'is not a PDF: it does not start with %PDF-.');
      raw = await sandbox.parse({ format: 'pdf', bytes, filename }, signal);
      break;
    case 'docx':
      if (startsWith(bytes, OLE_MAGIC)) {
        throw DocumentError.about(
          'invalid_file',
          filename,
          'is not a .docx (Office Open XML) file: it looks like an old Word .doc or a password-protected document. Save it as .docx without a password.',
        );
      }
      if (!startsWith(bytes, ZIP_MAGIC)) throw DocumentError.about('invalid_file', filename, 'is not a .docx file: a .docx is a ZIP archive, and this is not one.');
      raw = await sandbox.parse({ format: 'docx', bytes, filename }, signal);
      break;
    case 'html':
    case 'xml':
    case 'json':
      raw = await sandbox.parse({ format: parsedFormat(kind, filename), bytes, filename }, signal);
      break;
    default:
      raw = decodeText(bytes, filename, TEXT_LABEL[kind]);
  }

  signal?.throwIfAborted();
  const text = await normalizeText(raw, signal);
  if (text === '') throw DocumentError.about('empty_file', filename, 'holds no text.');
  if (Buffer.byteLength(text, 'utf8') > MAX_TEXT_BYTES) {
    throw DocumentError.about('invalid_file', filename, `holds more than ${MAX_TEXT_BYTES / 1024 / 1024} MB of text, the most that is read.`);
  }
  return { text, kind };
}

/** Ends the shared sandbox's workers (at shutdown; idle workers never keep the process up). */
export async function closeDocumentSandbox(): Promise<void> {
  const s = shared;
  shared = undefined;
  await s?.close();
}

function parsedFormat(kind: 'html' | 'xml' | 'json', filename: string): ParsedFormat {
  if (kind !== 'json') return kind;
  return fileExtension(filename) === 'json' ? 'json' : 'jsonl';
}

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]; // PK\3\4
const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]; // Compound File (.doc, encrypted .docx)

function startsWith(bytes: Uint8Array, magic: readonly number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}
