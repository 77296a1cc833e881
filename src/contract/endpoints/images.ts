// Image endpoints (SPEC "Images"; Limits: prompt 4000 characters, upload 8 MB). No selectable model:
// `model` and `response_format` are accepted without effect.
import { z } from 'zod';
import { applied, fileUpload, limited, MB, noEffect, refused, svcSchema, userSchema } from '../fields.ts';
import { defineEndpoint } from '../types.ts';
import { MAX_SIDE, MIN_SIDE, parseSize } from '../../providers/inline/images/sizes.ts';
import type { FieldTable } from '../types.ts';

const promptSchema = z.string().min(1).max(4000, 'prompt is at most 4000 characters');
const qualitySchema = z.enum(['standard', 'hd', 'high', 'max']).nullable();
// The size sets the aspect ratio: the offline engine draws at exactly this size; an
// upstream model may answer at its own size of that ratio.
const sizeSchema = z
  .string()
  .regex(/^(auto|\d{2,5}x\d{2,5})$/, 'size is auto or WIDTHxHEIGHT, like 1024x1536')
  .refine((s) => parseSize(s) !== null, `size is auto or WIDTHxHEIGHT with each side ${MIN_SIDE} to ${MAX_SIDE} pixels and at most 3840x2160's pixels`)
  .nullable();

const IMAGE_FILE_NOTE = 'one PNG, JPEG, WebP or GIF image up to 8 MB';
const NO_MODEL = 'image generation names no selectable model';
const FORMAT_NOTE = 'the image comes back as b64_json, or as url when the model returns a link';

/** Fields every image endpoint shares. */
const commonFields = {
  model: noEffect(NO_MODEL, z.string().nullable()),
  response_format: noEffect(FORMAT_NOTE, z.enum(['url', 'b64_json']).nullable()),
  size: applied(sizeSchema, `sets the aspect ratio: WIDTHxHEIGHT (each side ${MIN_SIDE} to ${MAX_SIDE}, at most 3840x2160's pixels) or auto (1024x1024; an upload's own size for edits and variations); the offline engine draws at exactly this size`),
  user: applied(userSchema, 'kept in the activity log'),
} as const satisfies FieldTable;

export const imagesResponseSchema = z
  .looseObject({
    created: z.number().int(),
    data: z.array(z.looseObject({ b64_json: z.string().optional(), url: z.string().optional(), revised_prompt: z.string().optional() })),
    background: z.enum(['transparent', 'opaque']).optional(),
    output_format: z.enum(['png', 'jpeg', 'webp']).optional(),
    quality: z.string().optional(),
    size: z.string().optional(),
    usage: z
      .looseObject({
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
        input_tokens_details: z.looseObject({ image_tokens: z.number().int(), text_tokens: z.number().int() }).optional(),
      })
      .optional(),
    svc: svcSchema,
  })
  .meta({ id: 'ImagesResponse' });

const notes = [FORMAT_NOTE, 'the format is the model\'s own (PNG, JPEG or WebP)', 'one image per request'];

export const createImage = defineEndpoint({
  operationId: 'createImage',
  method: 'POST',
  path: '/images/generations',
  family: 'images',
  summary: 'Creates an image from a prompt.',
  permission: 'image_generation',
  body: {
    type: 'json',
    required: ['prompt'],
    fields: {
      ...commonFields,
      prompt: applied(promptSchema, 'up to 4000 characters'),
      quality: applied(qualitySchema, 'standard, hd, high or max'),
      n: limited([1]),
      background: limited(['auto']),
      moderation: limited(['auto']),
      partial_images: limited([0]),
      stream: limited([false], 'no image streaming'),
      style: refused('style presets are not offered; describe the style in the prompt'),
      output_format: refused('the format is the model\'s own (PNG, JPEG or WebP)'),
      output_compression: refused('the format is the model\'s own; compression cannot be chosen'),
    },
  },
  response: { schema: imagesResponseSchema },
  billable: true,
  notes,
});

// Multipart form values arrive as text, so limited values are given as they arrive.
export const createImageEdit = defineEndpoint({
  operationId: 'createImageEdit',
  method: 'POST',
  path: '/images/edits',
  family: 'images',
  summary: 'Edits one uploaded image following a prompt.',
  permission: 'image_generation',
  body: {
    type: 'multipart',
    required: ['image', 'prompt'],
    fields: {
      ...commonFields,
      image: fileUpload(IMAGE_FILE_NOTE, { maxBytes: 8 * MB }),
      prompt: applied(promptSchema, 'up to 4000 characters'),
      quality: applied(qualitySchema, 'standard, hd, high or max'),
      n: limited(['1']),
      background: limited(['auto']),
      partial_images: limited(['0']),
      stream: limited(['false'], 'no image streaming'),
      // The reference's JSON form of this endpoint.
      moderation: limited(['auto']),
      images: refused('send one image as the multipart `image` part; image references by URL or file id are not offered'),
      mask: refused('masks are not offered; describe the area to change in the prompt'),
      input_fidelity: refused('input fidelity cannot be chosen'),
      output_format: refused('the format is the model\'s own (PNG, JPEG or WebP)'),
      output_compression: refused('the format is the model\'s own; compression cannot be chosen'),
    },
  },
  response: { schema: imagesResponseSchema },
  billable: true,
  notes: [...notes, 'image upload up to 8 MB'],
});

export const createImageVariation = defineEndpoint({
  operationId: 'createImageVariation',
  method: 'POST',
  path: '/images/variations',
  family: 'images',
  summary: 'Creates a variation of one uploaded image.',
  permission: 'image_generation',
  body: {
    type: 'multipart',
    required: ['image'],
    fields: {
      ...commonFields,
      image: fileUpload(IMAGE_FILE_NOTE, { maxBytes: 8 * MB }),
      n: limited(['1']),
    },
  },
  response: { schema: imagesResponseSchema },
  billable: true,
  notes: [...notes, 'image upload up to 8 MB'],
});

export const imagesEndpoints = [createImage, createImageEdit, createImageVariation];
