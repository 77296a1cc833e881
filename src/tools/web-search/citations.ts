// `url_citation` annotations: the answer cites a source the web tools gave it as a
// Markdown link to its URL (web-tools.ts tells the model so), and each such link to a
// source of this response is annotated with the link's span. Links to anything the
// tools did not return are left alone (a model may invent a URL; it is not a citation).
// Chat (message.annotations) and Responses (output_text annotations) share this.
import type { WebCallData, WebSource } from './web-tools.ts';

export interface UrlCitation {
  url: string;
  title: string;
  /** The link's first character and one past its last, in Unicode code points (as Python and the reference count). */
  start_index: number;
  end_index: number;
}

/**
 * `[label](https://...)`: negated classes only, and a label holds no `[`, so a scan from
 * one `[` stops at the next (text full of brackets stays linear to scan).
 */
const LINK = /\[([^[\]\n]{0,1000})\]\((https?:\/\/[^\s()<>]{1,2048})\)/g;

const canonical = (url: string) => url.replace(/\/$/, '');

/** Whether a tool result's data is a web call's (it then names sources). */
export function isWebCallData(data: unknown): data is WebCallData {
  return typeof data === 'object' && data !== null && (data as { kind?: unknown }).kind === 'web';
}

/** The sources the web tools of one response returned, by URL. */
export class CitedSources {
  private readonly byUrl = new Map<string, WebSource>();

  /** Adds a tool result's sources (anything but a web call's data is ignored). */
  add(data: unknown): void {
    if (!isWebCallData(data)) return;
    for (const s of data.sources) if (!this.byUrl.has(canonical(s.url))) this.byUrl.set(canonical(s.url), s);
  }

  get size(): number {
    return this.byUrl.size;
  }

  /** The url_citation annotations of an answer's text, in text order. */
  citations(text: string): UrlCitation[] {
    if (this.byUrl.size === 0) return [];
    const out: UrlCitation[] = [];
    let codePoints = 0;
    let counted = 0;
    for (const m of text.matchAll(LINK)) {
      const source = this.byUrl.get(canonical(m[2]!));
      if (!source) continue;
      for (const _ of text.slice(counted, m.index)) codePoints++;
      counted = m.index;
      let length = 0;
      for (const _ of m[0]) length++;
      out.push({ url: source.url, title: source.title, start_index: codePoints, end_index: codePoints + length });
    }
    return out;
  }
}
