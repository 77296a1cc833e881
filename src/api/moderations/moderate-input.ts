// The Moderate requests switch (SPEC "Authentication" item 2; issue 21 item 3): a key with
// it on has the input of its chat, completions and responses requests moderated before
// any model runs, each input (a message's text and images) on its own; one flagged at
// the configured thresholds is refused with a 400 `content_flagged` naming the input and
// the categories (not the text), and nothing runs or is charged (the offline moderation
// engine costs nothing). Images (chat `image_url` parts, responses `input_image` parts
// with an image_url) are read as POST /v1/moderations reads them (image-parts.ts): one
// that cannot be read is a 400 naming the part, since moderation reads all or refuses.
import { MODERATION_CATEGORIES } from '../../contract/endpoints/moderations.ts';
import { contentFlagged, invalidRequest } from '../../errors.ts';
import type { KeyRecord } from '../../keys/keys-service.ts';
import type { Call } from '../../pipeline/call.ts';
import type { ModerationInput } from '../../providers/types.ts';
import type { Services } from '../../services.ts';
import { checkImageCount, prepareImageParts, type ImagePart } from './image-parts.ts';

/** One input, its text and images, and the parameter that names it (`messages[2].content`). */
export interface InputText {
  text: string;
  param: string;
  /** Its image parts, each with the parameter that names it (`messages[2].content[1].image_url`). */
  images?: ImagePart[];
}

/** The moderation model the switch uses: the service's own. */
const SWITCH_MODEL = 'agent-moderation';
/**
 * Text one moderated request may carry (characters): the rules read about 1.6 MB a second
 * on one core, so this bounds the time a request costs, and a larger input is refused
 * rather than read in part (content hidden past a limit would go unmoderated).
 */
export const MAX_MODERATED_CHARS = 1024 * 1024;

/** Refuses the request when the key moderates and an input is flagged; does nothing otherwise. */
export async function moderateInput(services: Services, key: KeyRecord, texts: readonly InputText[], signal: AbortSignal, call?: Pick<Call, 'moderation'>): Promise<void> {
  if (!key.permissions.moderate) return;
  // The activity row says it was moderated, and (below) what was flagged: categories, never text.
  if (call) call.moderation = [];
  const inputs = texts.filter((t) => t.text.trim() !== '' || (t.images?.length ?? 0) > 0);
  if (inputs.length === 0) return;
  const total = inputs.reduce((n, t) => n + t.text.length, 0);
  if (total > MAX_MODERATED_CHARS) {
    throw invalidRequest(`This key moderates its requests, and moderation reads at most ${MAX_MODERATED_CHARS} characters of input per request; this one has ${total}. Send less, or use a key without the Moderate requests switch.`, inputs[0]!.param);
  }
  const engine = services.engines.for('moderation', SWITCH_MODEL);
  const moderated: ModerationInput[] = inputs.map((t) => ({ texts: t.text.trim() !== '' ? [t.text] : [], images: (t.images ?? []).map((p) => p.url) }));
  const images = inputs.flatMap((t) => t.images ?? []);
  if (images.length > 0) {
    checkImageCount(images);
    if (engine.prepareImage) {
      const prepared = await prepareImageParts(services, (image, s) => engine.prepareImage!(image, s), images, signal);
      let at = 0;
      for (const m of moderated) if (m.images.length > 0) m.prepared = prepared.slice(at, (at += m.images.length));
    }
  }
  const scored = await engine.moderate({ model: SWITCH_MODEL, inputs: moderated }, signal);
  const { thresholds, threshold } = services.config.moderation;
  scored.forEach((s, i) => {
    const flagged = MODERATION_CATEGORIES.filter((c) => (s.scores[c] ?? 0) >= (thresholds[c] ?? threshold));
    if (flagged.length > 0) {
      if (call) call.moderation = flagged;
      throw contentFlagged(`This key moderates its requests, and this input was flagged (${flagged.join(', ')}): nothing ran and nothing was charged.`, inputs[i]!.param);
    }
  });
}

/** The image parts of a content value with an image URL (chat `image_url`, responses `input_image`), named under `param`. */
export function contentImages(content: unknown, param: string): ImagePart[] {
  if (!Array.isArray(content)) return [];
  const out: ImagePart[] = [];
  content.forEach((p: any, j) => {
    if (p?.type === 'image_url' && typeof p.image_url?.url === 'string') out.push({ url: p.image_url.url, param: `${param}[${j}].image_url` });
    else if (p?.type === 'input_image' && typeof p.image_url === 'string') out.push({ url: p.image_url, param: `${param}[${j}].image_url` });
  });
  return out;
}

/** A file the request names by id, as the call read it (api/files/resolve-parts.ts). */
type ReadFile = { dataUrl: string; text?: string };

/**
 * The input of one message for the switch: its text and the text of the files it names
 * by id, its images by URL and the images it names by id (chat `file.file_id`, responses
 * `input_file` and `input_image` `file_id`), so an attachment is moderated like the
 * message it came in. A file that is neither text nor an image (a PDF) is not read here.
 */
export function messageInput(content: unknown, param: string, files: ReadonlyMap<string, ReadFile>): InputText {
  const texts = [contentText(content)];
  const images = contentImages(content, param);
  if (Array.isArray(content) && files.size > 0) {
    content.forEach((p: any, j) => {
      const chatFile = typeof p?.file?.file_id === 'string' ? p.file.file_id : undefined;
      const id: unknown = chatFile ?? p?.file_id;
      const file = typeof id === 'string' ? files.get(id) : undefined;
      if (!file) return;
      if (file.text !== undefined) texts.push(file.text);
      else if (file.dataUrl.startsWith('data:image/')) images.push({ url: file.dataUrl, param: `${param}[${j}].${chatFile ? 'file.file_id' : 'file_id'}` });
    });
  }
  return { text: texts.filter((t) => t !== '').join('\n'), param, images };
}

/** The text of a content value: a string, or the text parts of a list. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('\n');
}
