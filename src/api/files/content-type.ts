// The Content-Type a file is served with, from its name's extension: the part's own
// Content-Type is whatever the client said, so it is not echoed back; a name we do not
// recognise is served as bytes.
const TYPES: Record<string, string> = {
  jsonl: 'application/jsonl',
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
  html: 'text/html; charset=utf-8',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  zip: 'application/zip',
};

export const BINARY = 'application/octet-stream';

export function contentTypeFor(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return (dot >= 0 && TYPES[filename.slice(dot + 1).toLowerCase()]) || BINARY;
}

/** Types whose bytes are text the offline engine can read (chat messages' files). */
export const isTextType = (contentType: string) =>
  contentType.startsWith('text/') || ['application/json', 'application/jsonl', 'application/xml', 'application/yaml'].includes(contentType);
