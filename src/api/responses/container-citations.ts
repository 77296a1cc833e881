// `container_file_citation` annotations: an answer that links a file a program of this
// response wrote (`sandbox:/mnt/data/report.csv`, as the tool tells the model to, or a
// bare `/mnt/data/report.csv`) cites that container file, so the caller can download it
// (GET /containers/{container_id}/files/{file_id}/content). Offsets are Unicode code
// points, as the reference counts characters; end_index is exclusive.
import type { WrittenFile } from '../../tools/containers/container-tool.ts';

export interface ContainerFileCitation {
  type: 'container_file_citation';
  container_id: string;
  file_id: string;
  filename: string;
  start_index: number;
  end_index: number;
}

/** A path under /mnt/data up to a space, a quote, a bracket or a parenthesis. */
const LINK = /(?:sandbox:)?\/mnt\/data\/[^\s()[\]<>"'`]{1,1024}/g;
const TRAILING = /[.,;:!?*_]$/;

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The written file a link names, trailing punctuation aside; how much of the link it takes. */
function fileOf(link: string, written: ReadonlyMap<string, WrittenFile>): { file: WrittenFile; length: number } | undefined {
  let candidate = link;
  for (let i = 0; i < 4 && candidate.length > 0; i++) {
    const path = decoded(candidate.replace(/^sandbox:/, ''));
    const file = written.get(path);
    if (file) return { file, length: candidate.length };
    if (!TRAILING.test(candidate)) return undefined;
    candidate = candidate.slice(0, -1);
  }
  return undefined;
}

export function containerCitations(text: string, written: ReadonlyMap<string, WrittenFile>): ContainerFileCitation[] {
  if (written.size === 0) return [];
  const out: ContainerFileCitation[] = [];
  let codePoints = 0;
  let counted = 0;
  const advance = (to: number) => {
    for (const _ of text.slice(counted, to)) codePoints++;
    counted = to;
  };
  for (const m of text.matchAll(LINK)) {
    const found = fileOf(m[0], written);
    if (!found) continue;
    advance(m.index);
    const start = codePoints;
    advance(m.index + found.length);
    const { file } = found;
    out.push({ type: 'container_file_citation', container_id: file.container_id, file_id: file.file_id, filename: file.filename, start_index: start, end_index: codePoints });
  }
  return out;
}
