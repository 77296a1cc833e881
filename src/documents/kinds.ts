// Which kind of document a file is, from its name. The extension decides; the content
// confirms it where that is cheap (extract-text.ts). A name we do not know is refused
// rather than guessed at.

export type DocumentKind = 'text' | 'markdown' | 'csv' | 'json' | 'html' | 'xml' | 'yaml' | 'code' | 'pdf' | 'docx';

const EXTENSIONS: Readonly<Record<DocumentKind, readonly string[]>> = {
  text: ['txt', 'text', 'log', 'rst', 'tex', 'adoc', 'org', 'ini', 'cfg', 'conf', 'toml', 'properties', 'srt', 'vtt'],
  markdown: ['md', 'markdown', 'mdx'],
  csv: ['csv', 'tsv', 'tab'],
  json: ['json', 'jsonl', 'ndjson'],
  html: ['html', 'htm', 'xhtml'],
  xml: ['xml', 'rss', 'atom', 'svg', 'xsd', 'xsl', 'xslt', 'plist'],
  yaml: ['yaml', 'yml'],
  code: [
    ...['js', 'mjs', 'cjs', 'jsx', 'ts', 'mts', 'cts', 'tsx', 'vue', 'svelte'],
    ...['py', 'pyi', 'rb', 'php', 'pl', 'pm', 'lua', 'r', 'jl', 'dart'],
    ...['java', 'kt', 'kts', 'scala', 'groovy', 'gradle', 'clj', 'cljs', 'ex', 'exs', 'erl', 'hrl', 'hs', 'ml', 'mli', 'fs', 'fsx'],
    ...['c', 'h', 'cpp', 'cc', 'cxx', 'hpp', 'hh', 'hxx', 'cs', 'go', 'rs', 'swift', 'm', 'mm', 'zig', 'nim', 'v'],
    ...['sh', 'bash', 'zsh', 'fish', 'ps1', 'psm1', 'bat', 'cmd'],
    ...['sql', 'graphql', 'gql', 'proto', 'tf', 'hcl', 'cmake', 'mk'],
    ...['css', 'scss', 'sass', 'less'],
  ],
  pdf: ['pdf'],
  docx: ['docx'],
};

/** Files known by their whole name, without an extension. */
const NAMES: ReadonlyMap<string, DocumentKind> = new Map<string, DocumentKind>([
  ['dockerfile', 'code'],
  ['makefile', 'code'],
  ['gemfile', 'code'],
  ['rakefile', 'code'],
  ['jenkinsfile', 'code'],
  ['readme', 'text'],
  ['license', 'text'],
  ['changelog', 'text'],
]);

const BY_EXTENSION = new Map<string, DocumentKind>(
  (Object.entries(EXTENSIONS) as [DocumentKind, readonly string[]][]).flatMap(([kind, exts]) => exts.map((e) => [e, kind] as const)),
);

/** The kind a file name announces, or null when we do not read such files. */
export function documentKind(filename: string): DocumentKind | null {
  const ext = fileExtension(filename);
  return ext === '' ? (NAMES.get(baseName(filename)) ?? null) : (BY_EXTENSION.get(ext) ?? null);
}

/** The extension, lower case and without its dot; '' for none (and for a dotfile such as ".env"). */
export function fileExtension(filename: string): string {
  const base = baseName(filename);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1);
}

function baseName(filename: string): string {
  return filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1).toLowerCase();
}

/** What an `unsupported_file` message lists. */
export const SUPPORTED_KINDS_TEXT =
  'plain text (.txt, .log, .rst, .tex, ...), Markdown (.md), CSV/TSV, JSON/JSONL, HTML, XML, YAML, source code (.js, .ts, .py, .java, .c, .cpp, .cs, .go, .rb, .php, .sh, .rs, .sql, .css, ...), PDF with a text layer, Word .docx';

/** Every extension read, without dots (for a caller that checks names before upload). */
export const SUPPORTED_EXTENSIONS: readonly string[] = [...BY_EXTENSION.keys()];
