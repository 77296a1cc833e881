// The parsers of structured files: PDF (unpdf, which bundles pdf.js), Word .docx
// (mammoth, after zip.ts has made the archive safe), HTML (html-to-text), XML and JSON
// (ours). They run on the sandbox's worker thread (sandbox.ts), so a file that makes a
// library spin or swell costs that thread, not the server; the limits here keep even
// that bounded. Each returns the raw text (normalised later) or throws DocumentError.
import { convert, type HtmlToTextOptions } from 'html-to-text';
import { DocumentError } from './document-error.ts';
import { jsonLinesText, jsonText, TextLimitError } from './json-text.ts';
import { decodeText, MAX_TEXT_BYTES } from './plain-text.ts';
import { xmlText } from './xml-text.ts';
import { listEntries, readEntry, storedZip, ZipError, type ZipEntry } from './zip.ts';

export type ParsedFormat = 'pdf' | 'docx' | 'html' | 'xml' | 'json' | 'jsonl';

/** The label a message gives each format. */
export const FORMAT_LABEL: Readonly<Record<ParsedFormat, string>> = {
  pdf: 'PDF',
  docx: 'a Word document',
  html: 'HTML',
  xml: 'XML',
  json: 'JSON',
  jsonl: 'JSON Lines',
};

/** Pages of a PDF read at most; a longer PDF is refused. */
export const MAX_PDF_PAGES = 2000;
/**
 * Raw text a parser may produce before normalisation (which only removes whitespace
 * and control characters) at most: four times the kept limit, a bound on memory.
 */
export const MAX_RAW_CHARS = 4 * MAX_TEXT_BYTES;
/** Most bytes of an HTML, XML or JSON file (markup and syntax weigh more than text). */
export const MAX_MARKUP_BYTES = 64 * 1024 * 1024;
/**
 * The XML parts of a .docx, uncompressed, together; and the entries its archive may
 * list. mammoth reads about 1 MB of XML a second and needs some 40 times its size in
 * heap: 16 MB is about 7 MB of text, thousands of pages.
 */
export const MAX_DOCX_XML_BYTES = 16 * 1024 * 1024;
export const MAX_DOCX_ENTRIES = 10_000;

export interface ParseJob {
  format: ParsedFormat;
  bytes: Uint8Array;
  filename: string;
}

export async function parseDocument(job: ParseJob): Promise<string> {
  const { format, bytes, filename } = job;
  const broken = (reason: string, cause?: unknown) =>
    DocumentError.about('invalid_file', filename, `could not be parsed as ${FORMAT_LABEL[format]}: ${reason}`, cause);
  const tooMuchText = () => DocumentError.about('invalid_file', filename, `holds more than ${MAX_TEXT_BYTES / 1024 / 1024} MB of text, the most that is read.`);
  try {
    switch (format) {
      case 'pdf':
        return await pdfText(bytes, filename);
      case 'docx':
        return await docxText(bytes, filename);
      case 'html':
        return htmlText(decodeMarkup(bytes, filename, 'HTML'));
      case 'xml':
        return xmlText(decodeMarkup(bytes, filename, 'XML'));
      case 'json':
        return jsonText(decodeMarkup(bytes, filename, 'JSON'), MAX_RAW_CHARS);
      case 'jsonl':
        return jsonLinesText(decodeMarkup(bytes, filename, 'JSON Lines'), MAX_RAW_CHARS);
    }
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    if (err instanceof TextLimitError) throw tooMuchText();
    if (err instanceof ZipError) {
      throw err.overLimit ? DocumentError.about('invalid_file', filename, `is too large to read safely: ${err.message}.`) : broken(`${err.message}.`, err);
    }
    if (err instanceof RangeError && /call stack/i.test(err.message)) throw broken('it is nested too deeply.', err);
    throw broken(messageOf(err), err);
  }
}

function messageOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.length > 300 ? `${message.slice(0, 300)}…` : message) || 'unknown error';
}

const decodeMarkup = (bytes: Uint8Array, filename: string, what: string): string => decodeText(bytes, filename, what, MAX_MARKUP_BYTES);

// --- PDF

async function pdfText(bytes: Uint8Array, filename: string): Promise<string> {
  const { getDocumentProxy } = await import('unpdf');
  let pdf;
  try {
    pdf = await getDocumentProxy(bytes, {
      verbosity: 0, // errors only: pdf.js warns on stdout about every repaired file
      useWasm: false,
      enableXfa: false,
      stopAtErrors: false, // keep what can be read of a damaged page
    });
  } catch (err) {
    if ((err as Error)?.name === 'PasswordException') {
      throw DocumentError.about('invalid_file', filename, 'is a password-protected PDF; upload it without the password.', err);
    }
    throw err;
  }
  try {
    if (pdf.numPages > MAX_PDF_PAGES) {
      throw DocumentError.about('invalid_file', filename, `has ${pdf.numPages} pages; PDFs of at most ${MAX_PDF_PAGES} pages are read.`);
    }
    const pages: string[] = [];
    let chars = 0;
    // One page at a time (unpdf's extractText asks for all pages at once).
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const text = pageText((await page.getTextContent()).items);
      page.cleanup();
      chars += text.length;
      if (chars > MAX_RAW_CHARS) throw new TextLimitError(MAX_RAW_CHARS);
      pages.push(text);
    }
    const text = pages.join('\n\n');
    if (text.trim() === '') {
      throw DocumentError.about(
        'empty_file',
        filename,
        `has no text layer: its ${pdf.numPages === 1 ? 'page holds' : `${pdf.numPages} pages hold`} only images or drawings (a scan?). Text recognition (OCR) is not offered; run OCR on it first, or upload a PDF with text.`,
      );
    }
    return text;
  } finally {
    await pdf.loadingTask.destroy().catch(() => {});
  }
}

interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
  hasEOL: boolean;
}

/**
 * A page's text, a line break where pdf.js saw one, and a blank line (a paragraph break,
 * which pdf.js does not mark) where a line starts well below the last, or above it (a
 * new column): more than 1.5 line heights down, or more than 2 up.
 */
function pageText(items: readonly (PdfTextItem | object)[]): string {
  const parts: string[] = [];
  let lineStart = false; // the last item ended a line
  let lastY: number | undefined;
  let lastSize = 0;
  for (const item of items) {
    if (!('str' in item)) continue; // marked-content boundaries
    const y = item.transform[5] ?? 0;
    const size = item.height || Math.hypot(item.transform[2] ?? 0, item.transform[3] ?? 0);
    const inked = item.str.trim() !== '';
    if (inked && lineStart && lastY !== undefined) {
      const drop = lastY - y;
      const line = Math.max(size, lastSize);
      if (drop > 1.5 * line || drop < -2 * line) parts.push('\n');
    }
    parts.push(item.str);
    if (item.hasEOL) parts.push('\n');
    if (item.str !== '' || item.hasEOL) lineStart = item.hasEOL;
    if (inked) {
      lastY = y;
      lastSize = size;
    }
  }
  return parts.join('');
}

// --- Word

async function docxText(bytes: Uint8Array, filename: string): Promise<string> {
  const entries = listEntries(bytes, MAX_DOCX_ENTRIES);
  if (!entries.some((e) => e.name === 'word/document.xml')) {
    throw new ZipError('it is a ZIP archive without word/document.xml, so not a Word document');
  }
  // The text is in the XML parts; media, fonts and embedded binaries are left out.
  const kept = entries.filter((e) => /\.(xml|rels)$/i.test(e.name) && !e.name.endsWith('/'));
  const declared = kept.reduce((n, e) => n + e.size, 0);
  if (declared > MAX_DOCX_XML_BYTES) {
    throw new ZipError(`its XML parts hold ${mb(declared)} MB uncompressed; at most ${mb(MAX_DOCX_XML_BYTES)} MB are read`, true);
  }
  const parts: { entry: ZipEntry; data: Uint8Array }[] = kept.map((entry) => ({ entry, data: readEntry(bytes, entry) }));
  const mammoth = (await import('mammoth')).default;
  const result = await mammoth.extractRawText({ buffer: storedZip(parts) });
  if (result.value.length > MAX_RAW_CHARS) throw new TextLimitError(MAX_RAW_CHARS);
  return result.value;
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0);

// --- HTML

const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  decodeEntities: true,
  // We bound the input ourselves; html-to-text would cut it silently at 16 M characters.
  limits: { maxInputLength: MAX_MARKUP_BYTES },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'template', format: 'skip' },
    { selector: 'svg', format: 'skip' },
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'h2', options: { uppercase: false } },
    { selector: 'h3', options: { uppercase: false } },
    { selector: 'h4', options: { uppercase: false } },
    { selector: 'h5', options: { uppercase: false } },
    { selector: 'h6', options: { uppercase: false } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 200 } },
  ],
};

function htmlText(html: string): string {
  const text = convert(html, HTML_OPTIONS);
  if (text.length > MAX_RAW_CHARS) throw new TextLimitError(MAX_RAW_CHARS);
  return text;
}
