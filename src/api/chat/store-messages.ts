// Request messages as GET /chat/completions/{id}/messages lists them: the reference's
// ChatCompletionStoreMessage (id `<completion id>-<index>`, the text as `content`, the
// author's `name` or null, and `content_parts` when the content was sent as parts).

type Part = { type?: unknown; text?: unknown };

export function storeMessage(completionId: string, index: number, message: unknown): Record<string, unknown> {
  const m = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>;
  const parts = Array.isArray(m.content) ? (m.content as Part[]) : null;
  const texts = parts?.filter((p) => p.type === 'text').map((p) => String(p.text ?? ''));
  const out: Record<string, unknown> = {
    id: `${completionId}-${index}`,
    role: m.role,
    // Parts are joined into the text the reference reports as `content`.
    content: parts ? (texts!.length ? texts!.join('') : null) : typeof m.content === 'string' ? m.content : null,
    name: typeof m.name === 'string' ? m.name : null,
  };
  // Role-specific members, only when sent (the request is stored verbatim; unknown members stay out).
  for (const field of ['refusal', 'tool_calls', 'function_call', 'tool_call_id'] as const) {
    if (m[field] !== undefined) out[field] = m[field];
  }
  // The reference keeps only text and image parts here.
  out.content_parts = parts ? parts.filter((p) => p.type === 'text' || p.type === 'image_url') : null;
  return out;
}

/** The message index a cursor names, or undefined when it is not a message of this completion. */
export function messageIndex(completionId: string, cursor: string): number | undefined {
  const prefix = `${completionId}-`;
  if (!cursor.startsWith(prefix)) return undefined;
  const rest = cursor.slice(prefix.length);
  return /^\d{1,9}$/.test(rest) ? Number(rest) : undefined;
}
