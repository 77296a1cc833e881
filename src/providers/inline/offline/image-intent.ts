// The offline engine and the image_generation tool: a function named image_generation
// that takes a `prompt` is called with the user's words (a request for a picture without
// its lead, "Please draw me ..."), bounded to the image endpoints' 4000 characters.
import type { FunctionTool } from '../../types.ts';

export const IMAGE_TOOL = 'image_generation';

const takesPrompt = (t: FunctionTool) => typeof (t.parameters as { properties?: Record<string, unknown> } | undefined)?.properties?.prompt === 'object';

/** A function named image_generation that takes a `prompt`. */
export function imageTool(tools: readonly FunctionTool[]): FunctionTool | undefined {
  return tools.find((t) => t.name === IMAGE_TOOL && takesPrompt(t));
}

/** Asking for a picture: draw, paint, sketch, an image/picture/illustration of ... */
const ASKS =
  /\b(?:draw|paint|sketch|illustrate|render)\b|\b(?:generate|create|make|produce|design|show)\s+(?:me\s+)?(?:an?\s+|the\s+|some\s+)?(?:\w+\s+)?(?:image|picture|illustration|drawing|painting|photo|logo|icon|poster|wallpaper)s?\b|\b(?:image|picture|illustration|drawing|painting|photo)s?\s+of\b/i;

export function asksForPicture(message: string): boolean {
  return ASKS.test(message.slice(0, 4000));
}

/** What to draw: the message without its polite lead ("Can you please draw me"). */
export function picturePrompt(message: string): string {
  const text = message.replace(/\s+/g, ' ').trim().slice(0, 4000);
  const lead = /^(?:(?:hi|hello|hey)[,!.]?\s+)?(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:(?:draw|paint|sketch|illustrate|render|generate|create|make|produce|design|show)\s+(?:me\s+)?)?(?:(?:an?|the|some)\s+)?(?:(?:image|picture|illustration|drawing|painting|photo)s?\s+of\s+)?/i;
  const prompt = text.replace(lead, '').replace(/[?!.]+$/, '').trim();
  return prompt || text || 'an image';
}
