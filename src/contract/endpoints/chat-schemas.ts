// Shapes of the chat completions family: the request's messages, tools and choices,
// and the objects it returns (SPEC "Chat completions"). Nested objects are loose so
// members the reference adds later pass through.
import { z } from 'zod';
import { completionUsageSchema, metadataSchema, objectId, svcSchema } from '../fields.ts';
import { jsonSchemaObject } from '../json-schema-limits.ts';

// --- Request: messages ----------------------------------------------------

const cacheBreakpoint = z.looseObject({ mode: z.literal('explicit') }).optional();

const textPart = z.looseObject({ type: z.literal('text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint });

/** SPEC: images by https or data URL. */
const imageUrlString = z
  .string()
  .refine((u) => u.startsWith('https://') || u.startsWith('data:'), { message: 'image_url.url must be an https or data URL' });

const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: imageUrlString, detail: z.enum(['auto', 'low', 'high']).optional() }),
  prompt_cache_breakpoint: cacheBreakpoint,
});

const audioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.enum(['wav', 'mp3']) }),
  prompt_cache_breakpoint: cacheBreakpoint,
});

const filePart = z.looseObject({
  type: z.literal('file'),
  file: z
    .looseObject({ file_id: objectId().optional(), file_data: z.string().optional(), filename: z.string().optional() })
    .refine((f) => f.file_id !== undefined || f.file_data !== undefined, { message: 'file needs file_id or file_data' }),
  prompt_cache_breakpoint: cacheBreakpoint,
});

const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

/**
 * Bounds on request lists. Zod checks a list's length before its items, so a list far
 * past these is refused at once; within them, validating even an invalid list costs
 * a few tens of milliseconds at most (each invalid item makes an issue).
 */
export const MAX_MESSAGES = 20_000;
const MAX_CONTENT_PARTS = 4_096;
/** OpenAI's own limit on tools (and on legacy functions). */
const MAX_TOOLS = 128;
const MAX_TOOL_CALLS = 1_024;

const textContent = z.union([z.string(), z.array(textPart).min(1).max(MAX_CONTENT_PARTS)]);

const userContentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);

/** A function tool call as the model returns it and the caller sends it back. */
export const chatToolCallSchema = z
  .looseObject({
    id: z.string(),
    type: z.literal('function', { error: 'only function tool calls are offered' }),
    function: z.looseObject({ name: z.string(), arguments: z.string() }),
  })
  .meta({ id: 'ChatCompletionMessageToolCall' });

const functionCallSchema = z.looseObject({ name: z.string(), arguments: z.string() });

const developerMessage = z.looseObject({ role: z.literal('developer'), content: textContent, name: z.string().optional() });
const systemMessage = z.looseObject({ role: z.literal('system'), content: textContent, name: z.string().optional() });
const userMessage = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(userContentPart).min(1).max(MAX_CONTENT_PARTS)]),
  name: z.string().optional(),
});
const assistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart])).min(1).max(MAX_CONTENT_PARTS)]).nullable().optional(),
  refusal: z.string().nullable().optional(),
  name: z.string().optional(),
  audio: z.looseObject({ id: z.string() }).nullable().optional(),
  tool_calls: z.array(chatToolCallSchema).max(MAX_TOOL_CALLS).optional(),
  function_call: functionCallSchema.nullable().optional(),
});
const toolMessage = z.looseObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string() });
const functionMessage = z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string() });

export const chatRequestMessageSchema = z
  .discriminatedUnion('role', [developerMessage, systemMessage, userMessage, assistantMessage, toolMessage, functionMessage])
  .meta({ id: 'ChatCompletionRequestMessage' });

/** The whole conversation: a non-empty list of messages. */
export const chatMessagesSchema = z
  .array(chatRequestMessageSchema)
  .min(1, 'messages must hold at least one message')
  .max(MAX_MESSAGES, `messages holds at most ${MAX_MESSAGES} messages`);

// --- Request: tools -------------------------------------------------------

const functionDefinition = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: jsonSchemaObject.optional(),
  strict: z.boolean().nullable().optional(),
});

/** SPEC: function tools only; a `custom` tool is a 400. */
export const chatToolSchema = z
  .looseObject({
    type: z.literal('function', { error: 'only function tools are offered (type must be "function")' }),
    function: functionDefinition,
  })
  .meta({ id: 'ChatCompletionTool' });

export const chatToolsSchema = z.array(chatToolSchema).max(MAX_TOOLS, `tools holds at most ${MAX_TOOLS} tools`);

/** `auto`, `none`, `required` or a named function. */
export const chatToolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string() }) }),
]);

/** Legacy `functions`: up to 128 definitions. */
export const chatFunctionsSchema = z
  .array(z.looseObject({ name: z.string().min(1), description: z.string().optional(), parameters: jsonSchemaObject.optional() }))
  .min(1)
  .max(128);

/** Legacy `function_call`. */
export const chatFunctionCallSchema = z.union([z.enum(['none', 'auto']), z.looseObject({ name: z.string() })]);

// --- Response objects -----------------------------------------------------

const topLogprob = z.looseObject({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).nullable() });
const tokenLogprob = topLogprob.extend({ top_logprobs: z.array(topLogprob) });
const choiceLogprobs = z
  .looseObject({ content: z.array(tokenLogprob).nullable(), refusal: z.array(tokenLogprob).nullable().optional() })
  .nullable();

const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

const urlCitation = z.looseObject({
  type: z.literal('url_citation'),
  url_citation: z.looseObject({ url: z.string(), title: z.string(), start_index: z.number().int(), end_index: z.number().int() }),
});

export const chatResponseMessageSchema = z
  .looseObject({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    refusal: z.string().nullable().optional(),
    // Reasoning text of `agent-think`, when the model gives some.
    reasoning_content: z.string().nullable().optional(),
    tool_calls: z.array(chatToolCallSchema).nullable().optional(),
    function_call: functionCallSchema.nullable().optional(),
    annotations: z.array(urlCitation).optional(),
  })
  .meta({ id: 'ChatCompletionResponseMessage' });

export const chatCompletionSchema = z
  .looseObject({
    id: z.string().meta({ description: 'starts chatcmpl-' }),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({ index: z.number().int(), message: chatResponseMessageSchema, finish_reason: finishReason, logprobs: choiceLogprobs }),
    ),
    usage: completionUsageSchema.optional(),
    service_tier: z.string().nullable().optional(),
    system_fingerprint: z.string().nullable().optional(),
    metadata: metadataSchema.optional(),
    svc: svcSchema,
  })
  .meta({ id: 'ChatCompletion' });

const toolCallChunk = z.looseObject({
  index: z.number().int(),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});

/** One `data:` event of a chat stream: role, content, finish and (optional) usage chunks. */
export const chatCompletionChunkSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        delta: z.looseObject({
          role: z.enum(['developer', 'system', 'user', 'assistant', 'tool']).optional(),
          content: z.string().nullable().optional(),
          reasoning_content: z.string().nullable().optional(),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(toolCallChunk).optional(),
          function_call: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
        }),
        finish_reason: finishReason.nullable(),
        logprobs: choiceLogprobs.optional(),
      }),
    ),
    // Present (and null until the end) with stream_options.include_usage; the last chunk carries usage.svc.
    usage: completionUsageSchema.nullable().optional(),
    service_tier: z.string().nullable().optional(),
    system_fingerprint: z.string().nullable().optional(),
    obfuscation: z.string().optional(),
  })
  .meta({ id: 'ChatCompletionChunk' });

/** A message of a stored completion, as GET /chat/completions/{id}/messages lists it. */
export const chatStoreMessageSchema = z
  .looseObject({
    id: z.string(),
    role: z.enum(['developer', 'system', 'user', 'assistant', 'tool', 'function']),
    content: z.string().nullable(),
    refusal: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    tool_calls: z.array(chatToolCallSchema).nullable().optional(),
    tool_call_id: z.string().nullable().optional(),
    content_parts: z.array(z.discriminatedUnion('type', [textPart, imagePart])).nullable().optional(),
  })
  .meta({ id: 'ChatCompletionStoreMessage' });
