// What makes a set of files a skill (SPEC "Skill"): plain relative paths, at most 500 files
// and 25 MB, a SKILL.md at the top whose front matter gives the name and description. The
// same checks serve a directory upload, a zip and the mount (skill-mounts.ts), so a path
// that reaches the disk has passed them twice.
import { invalidRequest, type ApiError } from '../../errors.ts';

export const MAX_FILES = 500;
export const MAX_BYTES = 25 * 1024 * 1024;
const MAX_PATH = 1024;
const MAX_SEGMENT = 255;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
export const SKILL_MD = 'SKILL.md';

/** A refusal of the upload, always naming `files`. */
export const refuse = (message: string): ApiError => invalidRequest(message, 'files');

/** Why a path is not a plain relative file path, or undefined when it is one. */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'an empty path';
  if (path.length > MAX_PATH) return `a path longer than ${MAX_PATH} characters`;
  if (path.includes('\u0000')) return 'a NUL character';
  // eslint-disable-next-line no-control-regex
  if (/[\u0001-\u001f\u007f]/.test(path)) return 'a control character';
  if (path.includes('\\')) return 'a backslash (paths use /)';
  if (path.startsWith('/')) return 'an absolute path';
  if (/^[A-Za-z]:/.test(path)) return 'a drive letter';
  for (const segment of path.split('/')) {
    if (segment === '') return 'an empty path segment (// or a trailing /)';
    if (segment === '.' || segment === '..') return `a '${segment}' segment`;
    if (segment.length > MAX_SEGMENT) return `a path segment longer than ${MAX_SEGMENT} characters`;
  }
  return undefined;
}

/** Refuses a path that is not plain and relative. */
export function checkPath(path: string): void {
  const problem = pathProblem(path);
  if (problem) throw refuse(`The file path '${printable(path)}' is refused: it has ${problem}. Paths must be relative, with / between plain names.`);
}

const printable = (s: string) => s.slice(0, 200).replace(/[\u0000-\u001f\u007f]/g, '?');

/**
 * The skill's files relative to its folder: SKILL.md at the top, or every path under one
 * top folder that holds SKILL.md (a folder uploaded or zipped whole), which is dropped.
 * Refuses duplicates and a path that is both a file and a folder.
 */
export function skillLayout(paths: readonly string[]): { strip: string } {
  if (paths.length === 0) throw refuse('The upload holds no files.');
  if (paths.length > MAX_FILES) throw refuse(`A skill holds at most ${MAX_FILES} files; the upload has ${paths.length}.`);
  const seen = new Set<string>();
  for (const path of paths) {
    checkPath(path);
    if (seen.has(path)) throw refuse(`The file path '${printable(path)}' appears twice.`);
    seen.add(path);
  }
  for (const path of paths) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/');
      if (seen.has(folder)) throw refuse(`'${printable(folder)}' is both a file and a folder.`);
    }
  }
  if (seen.has(SKILL_MD)) return { strip: '' };
  const top = paths[0]!.split('/')[0]!;
  if (paths.every((p) => p.startsWith(`${top}/`)) && seen.has(`${top}/${SKILL_MD}`)) return { strip: `${top}/` };
  throw refuse(`The upload has no ${SKILL_MD} at its top (or at the top of its one folder).`);
}

export interface FrontMatter {
  name: string;
  description: string;
}

const unquote = (v: string) => {
  const t = v.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) return t.slice(1, -1);
  return t;
};

/**
 * The front matter at the very top of SKILL.md: `---`, `key: value` lines, `---`. Values may
 * be quoted; indented lines continue the previous value (and `|` / `>` start such a block).
 * Only `name` and `description` are read.
 */
export function parseFrontMatter(bytes: Buffer): FrontMatter {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const lines = text.split(/\r?\n/);
  if (lines[0]?.trim() !== '---') throw refuse(`${SKILL_MD} must start with front matter: a '---' line, 'name:' and 'description:' lines, and a closing '---' line.`);
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) throw refuse(`The front matter of ${SKILL_MD} has no closing '---' line.`);
  const values = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines.slice(1, end)) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (/^\s/.test(line) && current) {
      const had = values.get(current)!;
      values.set(current, had ? `${had} ${line.trim()}` : line.trim());
      continue;
    }
    const m = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(line);
    if (!m) throw refuse(`The front matter of ${SKILL_MD} has a line that is not 'key: value': '${printable(line)}'.`);
    current = m[1]!;
    const raw = m[2]!.trim();
    values.set(current, raw === '|' || raw === '>' || raw === '|-' || raw === '>-' ? '' : unquote(raw));
  }
  const name = values.get('name') ?? '';
  const description = (values.get('description') ?? '').trim();
  if (!name) throw refuse(`The front matter of ${SKILL_MD} has no 'name'.`);
  if (name.length > MAX_NAME || !/^[A-Za-z0-9._-]+$/.test(name) || name === '.' || name === '..') {
    throw refuse(`The skill name '${printable(name)}' is refused: up to ${MAX_NAME} letters, digits, '.', '_' or '-' (it names the folder /mnt/skills/<name>).`);
  }
  if (!description) throw refuse(`The front matter of ${SKILL_MD} has no 'description'.`);
  if (description.length > MAX_DESCRIPTION) throw refuse(`The skill description is longer than ${MAX_DESCRIPTION} characters.`);
  // Stored as text: PostgreSQL keeps no NUL.
  if (description.includes('\u0000')) throw refuse(`The skill description must not contain NUL (U+0000) characters.`);
  return { name, description };
}
