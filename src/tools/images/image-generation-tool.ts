// The image_generation tool: a Responses request's hosted `image_generation` tool, and
// one of the assistant's own tools (SPEC "What the service does" item 7) when a
// Responses request has no tools and asks for a picture. The model sees a function
// `image_generation({prompt})`; the service makes the image with the image engine (the
// offline renderer, or the upstream's /images/generations), at the tool's size and
// quality, charged per image (IMAGE_PRICE_*) as a run of its own before it runs. The
// surface shows it as an `image_generation_call` item whose `result` is the base64 image;
// the model reads only that it was made.
import type { ChatMessage, ImageProvider, ImageQuality } from '../../providers/types.ts';
import { ImageUnreadable } from '../../providers/types.ts';
import type { AgentTool, ToolOutput } from '../types.ts';
import { argumentsObject } from '../types.ts';
import { asksForPicture as asksForPictureText } from '../../providers/inline/offline/image-intent.ts';

export const IMAGE_GENERATION_FUNCTION_NAME = 'image_generation';

/** What the surface shows of a call (the item's status and result); the model never sees it. */
export interface ImageCallData {
  status: 'completed' | 'failed';
  /** The image as base64 (PNG offline). */
  result: string | null;
}

export interface ImageToolConfig {
  size: { width: number; height: number } | 'auto';
  quality: ImageQuality;
  /** USD per image at this size and quality. */
  feeUsd: number;
  /** The tool entry's size and quality as sent (what an upstream receives). */
  fields: Record<string, string>;
}

/** The prompt cut to the endpoints' 4000 characters. */
const MAX_PROMPT = 4000;

/** Whether the last user message asks for a picture (the offline engine's own test: draw, paint, an image of ...). */
export function asksForPicture(messages: readonly ChatMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    const text = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => (p.type === 'text' ? p.text : '')).join(' ') : '';
    return asksForPictureText(text);
  }
  return false;
}

export function imageGenerationTool(engine: ImageProvider, config: ImageToolConfig): AgentTool {
  return {
    definition: {
      name: IMAGE_GENERATION_FUNCTION_NAME,
      description: 'Makes an image from a description and shows it to the user. Describe what to draw: objects, colours, setting.',
      parameters: {
        type: 'object',
        properties: { prompt: { type: 'string', description: 'what the image shows' } },
        required: ['prompt'],
      },
    },
    feeUsd: config.feeUsd,
    maxUses: 4,
    async run(argumentsJson, signal): Promise<ToolOutput> {
      const asked = argumentsObject(argumentsJson).prompt;
      const prompt = (typeof asked === 'string' && asked.trim() !== '' ? asked.trim() : 'an image').slice(0, MAX_PROMPT);
      try {
        const made = await engine.create({ operation: 'generation', prompt, size: config.size, quality: config.quality, fields: { prompt, ...config.fields } }, signal);
        if (!('b64' in made.image)) {
          const data: ImageCallData = { status: 'failed', result: null };
          return { text: 'The image could not be made: the image model answered with a link, not the image.', data };
        }
        const size = made.width && made.height ? `${made.width}x${made.height} ` : '';
        const data: ImageCallData = { status: 'completed', result: made.image.b64 };
        return { text: `The image (${size}${made.format ?? 'image'}) of "${prompt.slice(0, 200)}" was made and is shown to the user. Tell the user in a sentence what it shows.`, data };
      } catch (err) {
        if (signal.aborted) throw err;
        const data: ImageCallData = { status: 'failed', result: null };
        const why = err instanceof ImageUnreadable || (err instanceof Error && err.name === 'ProviderError') ? `: ${err.message.slice(0, 200)}` : '';
        return { text: `The image could not be made${why}.`, data };
      }
    },
  };
}
