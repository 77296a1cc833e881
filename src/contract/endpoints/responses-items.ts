// Items of the Responses family: what `input` (and conversation `items`) accept, and
// what a response's `output`, input-item lists and conversations hold (SPEC "Response").
import { z } from 'zod';
import { objectId } from '../fields.ts';
import { MAX_MESSAGES } from './chat-schemas.ts';

/**
 * Bounds on request lists (zod checks a list's length before its items, so a list far
 * past them is refused at once): parts, outputs, commands, actions.
 */
const MAX_LIST = 4_096;
/** Token logprobs of an assistant message sent back. */
const MAX_TOKENS_LIST = 100_000;

// --- Content parts --------------------------------------------------------

const cacheBreakpoint = z.looseObject({ mode: z.literal('explicit') }).nullable().optional();

/** SPEC: images by https or data URL (or an uploaded file_id). */
const imageUrl = z
  .string()
  .refine((u) => u.startsWith('https://') || u.startsWith('data:'), { message: 'image_url must be an https or data URL' });

const inputText = z.looseObject({ type: z.literal('input_text'), text: z.string(), prompt_cache_breakpoint: cacheBreakpoint });
const inputImage = z
  .looseObject({
    type: z.literal('input_image'),
    image_url: imageUrl.nullable().optional(),
    file_id: objectId().nullable().optional(),
    detail: z.enum(['low', 'high', 'auto', 'original']).nullable().optional(),
    prompt_cache_breakpoint: cacheBreakpoint,
  })
  .refine((p) => p.image_url != null || p.file_id != null, { message: 'input_image needs image_url or file_id' });
const inputFile = z.looseObject({
  type: z.literal('input_file'),
  file_id: objectId().nullable().optional(),
  file_data: z.string().nullable().optional(),
  file_url: z.string().nullable().optional(),
  filename: z.string().nullable().optional(),
  detail: z.enum(['auto', 'low', 'high']).optional(),
  prompt_cache_breakpoint: cacheBreakpoint,
});

const annotationSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('file_citation'), file_id: z.string(), filename: z.string(), index: z.number().int() }),
  z.looseObject({
    type: z.literal('url_citation'),
    url: z.string(),
    title: z.string(),
    start_index: z.number().int(),
    end_index: z.number().int(),
  }),
  z.looseObject({
    type: z.literal('container_file_citation'),
    container_id: z.string(),
    file_id: z.string(),
    filename: z.string(),
    start_index: z.number().int(),
    end_index: z.number().int(),
  }),
  z.looseObject({ type: z.literal('file_path'), file_id: z.string(), index: z.number().int() }),
]);

const topLogprob = z.looseObject({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).max(64) });
const outputText = z.looseObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(annotationSchema).max(MAX_LIST).optional(),
  logprobs: z.array(topLogprob.extend({ top_logprobs: z.array(topLogprob).max(20) })).max(MAX_TOKENS_LIST).optional(),
});
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const plainText = z.looseObject({ type: z.enum(['text', 'summary_text', 'reasoning_text']), text: z.string() });

/** Parts a message may carry in input: input parts, and output parts of an assistant turn sent back. */
const messagePart = z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusal]);
/** Parts of a function_call_output given as a list. */
const toolOutputPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile]);

// --- Shared pieces --------------------------------------------------------

const itemStatus = z.enum(['in_progress', 'completed', 'incomplete']);
const callId = z.string().min(1).max(64);
/** Item ids are kept in a conversation's text column: bounded, never NUL. */
const optionalId = objectId().nullable().optional();

const shellAction = z.looseObject({
  commands: z.array(z.string()).max(MAX_LIST),
  timeout_ms: z.number().int().nullable().optional(),
  max_output_length: z.number().int().nullable().optional(),
});
const shellOutcome = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('exit'), exit_code: z.number().int() }),
  z.looseObject({ type: z.literal('timeout') }),
]);
const shellOutputEntry = z.looseObject({ stdout: z.string(), stderr: z.string(), outcome: shellOutcome });

const patchOperation = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('create_file'), path: z.string().min(1), diff: z.string() }),
  z.looseObject({ type: z.literal('update_file'), path: z.string().min(1), diff: z.string() }),
  z.looseObject({ type: z.literal('delete_file'), path: z.string().min(1) }),
]);

const screenshot = z.looseObject({
  type: z.literal('computer_screenshot'),
  image_url: imageUrl.optional(),
  file_id: z.string().optional(),
});
const safetyCheck = z.looseObject({ id: z.string(), code: z.string().nullable().optional(), message: z.string().nullable().optional() });

const computerActionTypes = ['click', 'double_click', 'drag', 'move', 'scroll', 'keypress', 'type', 'wait', 'screenshot'] as const;
const computerAction = z.looseObject({ type: z.enum(computerActionTypes) });

const summaryPart = z.looseObject({ type: z.literal('summary_text'), text: z.string() });

// --- Input items ----------------------------------------------------------

/** Items `input` accepts (SPEC: messages, function calls and outputs, images, files, compaction items, hosted tool items, mcp_approval_response). */
export const responseInputItemSchema = z
  .discriminatedUnion(
    'type',
    [
      // A message; `type` may be left out (the easy form).
      z.looseObject({
        type: z.literal('message').optional(),
        id: optionalId,
        role: z.enum(['user', 'assistant', 'system', 'developer']),
        content: z.union([z.string(), z.array(messagePart).max(MAX_LIST)]),
        phase: z.enum(['commentary', 'final_answer']).nullable().optional(),
        status: itemStatus.nullable().optional(),
      }),
      z.looseObject({
        type: z.literal('function_call'),
        id: optionalId,
        call_id: z.string(),
        namespace: z.string().nullable().optional(),
        name: z.string(),
        arguments: z.string(),
        status: itemStatus.nullable().optional(),
      }),
      z.looseObject({
        type: z.literal('custom_tool_call'),
        id: optionalId,
        call_id: z.string(),
        namespace: z.string().nullable().optional(),
        name: z.string(),
        input: z.string(),
      }),
      z.looseObject({
        type: z.literal('custom_tool_call_output'),
        id: optionalId,
        call_id: callId,
        output: z.union([z.string(), z.array(toolOutputPart).max(MAX_LIST)]),
      }),
      z.looseObject({
        type: z.literal('function_call_output'),
        id: optionalId,
        call_id: callId,
        output: z.union([z.string(), z.array(toolOutputPart).max(MAX_LIST)]),
        status: itemStatus.nullable().optional(),
      }),
      z.looseObject({
        type: z.literal('reasoning'),
        id: optionalId,
        summary: z.array(summaryPart).max(MAX_LIST),
        encrypted_content: z.string().nullable().optional(),
      }),
      z.looseObject({ type: z.literal('compaction'), id: optionalId, encrypted_content: z.string() }),
      z.looseObject({ type: z.literal('item_reference'), id: objectId() }),
      z.looseObject({ type: z.literal('file_search_call'), id: z.string(), queries: z.array(z.string()).max(MAX_LIST).optional() }),
      z.looseObject({ type: z.literal('web_search_call'), id: z.string() }),
      z.looseObject({ type: z.literal('image_generation_call'), id: z.string(), result: z.string().nullable().optional() }),
      z.looseObject({ type: z.literal('code_interpreter_call'), id: z.string(), container_id: objectId().optional() }),
      z.looseObject({
        type: z.literal('shell_call'),
        id: optionalId,
        call_id: callId,
        action: shellAction,
        status: itemStatus.nullable().optional(),
        environment: z.union([z.looseObject({ type: z.literal('local') }), z.looseObject({ type: z.literal('container_reference'), container_id: objectId() })]).nullable().optional(),
      }),
      z.looseObject({
        type: z.literal('shell_call_output'),
        id: optionalId,
        call_id: callId,
        output: z.array(shellOutputEntry).max(MAX_LIST),
        max_output_length: z.number().int().nullable().optional(),
      }),
      z.looseObject({
        type: z.literal('computer_call'),
        id: z.string(),
        call_id: z.string(),
        action: computerAction.optional(),
        actions: z.array(computerAction).max(MAX_LIST).optional(),
      }),
      z.looseObject({
        type: z.literal('computer_call_output'),
        id: optionalId,
        call_id: callId,
        output: screenshot,
        acknowledged_safety_checks: z.array(safetyCheck).max(MAX_LIST).nullable().optional(),
      }),
      z.looseObject({
        type: z.literal('apply_patch_call'),
        id: optionalId,
        call_id: callId,
        status: z.enum(['in_progress', 'completed']),
        operation: patchOperation,
      }),
      z.looseObject({
        type: z.literal('apply_patch_call_output'),
        id: optionalId,
        call_id: callId,
        status: z.enum(['completed', 'failed']),
        output: z.string().nullable().optional(),
      }),
      z.looseObject({ type: z.literal('mcp_call'), id: z.string(), server_label: z.string(), name: z.string(), arguments: z.string() }),
      z.looseObject({ type: z.literal('mcp_list_tools'), id: z.string(), server_label: z.string(), tools: z.array(z.looseObject({ name: z.string() })).max(MAX_LIST) }),
      z.looseObject({ type: z.literal('mcp_approval_request'), id: z.string(), server_label: z.string(), name: z.string(), arguments: z.string() }),
      z.looseObject({
        type: z.literal('mcp_approval_response'),
        id: optionalId,
        approval_request_id: z.string(),
        approve: z.boolean(),
        reason: z.string().nullable().optional(),
      }),
    ],
    { error: 'unsupported input item type' },
  )
  .meta({ id: 'ResponseInputItem' });

/** `input`: text, or a list of items. */
export const responseInputSchema = z.union([z.string(), z.array(responseInputItemSchema).max(MAX_MESSAGES, `input holds at most ${MAX_MESSAGES} items`)]);

// --- Stored / returned items ---------------------------------------------

/** An item as the service returns it: in a response's output, an input-item list or a conversation. */
export const responseItemSchema = z
  .discriminatedUnion('type', [
    z.looseObject({
      type: z.literal('message'),
      id: z.string(),
      role: z.enum(['user', 'assistant', 'system', 'developer']),
      status: itemStatus.optional(),
      content: z.array(z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusal, plainText])),
    }),
    z.looseObject({
      type: z.literal('function_call'),
      id: z.string().optional(),
      call_id: z.string(),
      name: z.string(),
      arguments: z.string(),
      status: itemStatus.optional(),
    }),
    z.looseObject({
      type: z.literal('function_call_output'),
      id: z.string(),
      call_id: z.string(),
      output: z.union([z.string(), z.array(toolOutputPart)]),
      status: itemStatus.optional(),
    }),
    z.looseObject({ type: z.literal('custom_tool_call'), id: z.string(), call_id: z.string(), name: z.string(), input: z.string(), status: itemStatus.optional() }),
    z.looseObject({ type: z.literal('custom_tool_call_output'), id: z.string(), call_id: z.string(), output: z.union([z.string(), z.array(toolOutputPart)]) }),
    z.looseObject({
      type: z.literal('reasoning'),
      id: z.string(),
      summary: z.array(summaryPart),
      content: z.array(z.looseObject({ type: z.literal('reasoning_text'), text: z.string() })).optional(),
      encrypted_content: z.string().nullable().optional(),
      status: itemStatus.optional(),
    }),
    z.looseObject({ type: z.literal('compaction'), id: z.string(), encrypted_content: z.string() }),
    z.looseObject({
      type: z.literal('file_search_call'),
      id: z.string(),
      status: z.enum(['in_progress', 'searching', 'completed', 'incomplete', 'failed']),
      queries: z.array(z.string()),
      // Only with include: [file_search_call.results].
      results: z
        .array(z.looseObject({ file_id: z.string(), filename: z.string(), text: z.string(), score: z.number() }))
        .nullable()
        .optional(),
    }),
    z.looseObject({
      type: z.literal('web_search_call'),
      id: z.string(),
      status: z.enum(['in_progress', 'searching', 'completed', 'failed']),
      action: z.looseObject({ type: z.enum(['search', 'open_page', 'find']) }).optional(),
    }),
    z.looseObject({
      type: z.literal('image_generation_call'),
      id: z.string(),
      status: z.enum(['in_progress', 'completed', 'generating', 'failed']),
      result: z.string().nullable().meta({ description: 'the image as base64' }),
    }),
    z.looseObject({
      type: z.literal('code_interpreter_call'),
      id: z.string(),
      status: z.enum(['in_progress', 'completed', 'incomplete', 'interpreting', 'failed']),
      container_id: z.string(),
      code: z.string().nullable(),
      // Only with include: [code_interpreter_call.outputs].
      outputs: z
        .array(
          z.discriminatedUnion('type', [
            z.looseObject({ type: z.literal('logs'), logs: z.string() }),
            z.looseObject({ type: z.literal('image'), url: z.string() }),
          ]),
        )
        .nullable(),
    }),
    z.looseObject({ type: z.literal('shell_call'), id: z.string(), call_id: z.string(), action: shellAction, status: itemStatus }),
    z.looseObject({
      type: z.literal('shell_call_output'),
      id: z.string(),
      call_id: z.string(),
      output: z.array(shellOutputEntry),
      max_output_length: z.number().int().nullable().optional(),
      status: itemStatus.optional(),
    }),
    z.looseObject({
      type: z.literal('computer_call'),
      id: z.string(),
      call_id: z.string(),
      action: computerAction.optional(),
      actions: z.array(computerAction).optional(),
      pending_safety_checks: z.array(safetyCheck),
      status: itemStatus,
    }),
    z.looseObject({ type: z.literal('computer_call_output'), id: z.string(), call_id: z.string(), output: screenshot, status: itemStatus.optional() }),
    z.looseObject({
      type: z.literal('apply_patch_call'),
      id: z.string(),
      call_id: z.string(),
      status: z.enum(['in_progress', 'completed']),
      operation: patchOperation,
    }),
    z.looseObject({
      type: z.literal('apply_patch_call_output'),
      id: z.string(),
      call_id: z.string(),
      status: z.enum(['completed', 'failed']),
      output: z.string().nullable().optional(),
    }),
    z.looseObject({
      type: z.literal('mcp_call'),
      id: z.string(),
      server_label: z.string(),
      name: z.string(),
      arguments: z.string(),
      output: z.string().nullable().optional(),
      error: z.unknown().optional(),
      status: z.enum(['in_progress', 'completed', 'incomplete', 'calling', 'failed']).optional(),
      approval_request_id: z.string().nullable().optional(),
    }),
    z.looseObject({
      type: z.literal('mcp_list_tools'),
      id: z.string(),
      server_label: z.string(),
      tools: z.array(z.looseObject({ name: z.string(), description: z.string().nullable().optional(), input_schema: z.unknown() })),
      error: z.string().nullable().optional(),
    }),
    z.looseObject({ type: z.literal('mcp_approval_request'), id: z.string(), server_label: z.string(), name: z.string(), arguments: z.string() }),
    z.looseObject({
      type: z.literal('mcp_approval_response'),
      id: z.string(),
      approval_request_id: z.string(),
      approve: z.boolean(),
      reason: z.string().nullable().optional(),
    }),
  ])
  .meta({ id: 'ResponseItem' });
