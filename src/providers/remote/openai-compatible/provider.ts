// The OpenAI-compatible upstream as a ChatProvider: map the request, open the
// stream (transport.ts), parse SSE, map chunks to events.
//
// Abort contract: when `signal` aborts, the upstream fetch is aborted at once (the
// upstream sees its connection close) and the generator throws `signal.reason`
// unchanged (a DOMException named 'AbortError' when abort() was called without a
// reason). It never wraps an abort in ProviderError and never retries after one.
// Every other failure is a ProviderError.
import type { ChatProvider, ChatRequest, CompletionRequest, ProviderEvent } from '../../types.ts';
import { ProviderError } from '../../types.ts';
import type { UpstreamConfig } from './config.ts';
import { errorInPayload, streamError } from './errors.ts';
import { toChatBody, toCompletionBody } from './request-mapping.ts';
import { parseSse } from './sse-parser.ts';
import { StreamMapper } from './stream-mapping.ts';
import type { StreamKind } from './stream-mapping.ts';
import { UpstreamCall } from './transport.ts';
import type { TransportOptions } from './transport.ts';

export type ProviderOptions = Partial<TransportOptions>;

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError(`upstream sent invalid JSON in ${what}`, undefined, false);
  }
}

async function readAll(bytes: AsyncIterable<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of bytes) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

export function createOpenAICompatibleProvider(config: UpstreamConfig, options: ProviderOptions = {}): ChatProvider {
  const transport: TransportOptions = {
    retryBaseMs: options.retryBaseMs ?? 200,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)), // unbound, as fetch wants
  };

  async function* run(kind: StreamKind, path: string, body: unknown, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    signal.throwIfAborted();
    const call = new UpstreamCall(config, signal, transport);
    const mapper = new StreamMapper(kind);
    let finished = false;
    try {
      const opened = await call.open(path, body);

      // A server that ignores `stream: true` answers one JSON object.
      if (opened.contentType.includes('application/json')) {
        const events = mapper.whole(parseJson(await readAll(opened.bytes), 'its response'));
        finished = true;
        for (const event of events) {
          signal.throwIfAborted();
          yield event;
        }
        return;
      }

      let sawDone = false;
      for await (const sse of parseSse(opened.bytes)) {
        if (sse.data === '[DONE]') {
          sawDone = true;
          break; // the answer is complete; close(true) reads off whatever follows
        }
        if (sse.event === 'error') {
          let payload: unknown;
          try {
            payload = JSON.parse(sse.data);
          } catch {
            // plain-text error event
          }
          throw streamError(errorInPayload(payload) ?? { message: sse.data.slice(0, 500) });
        }
        for (const event of mapper.push(parseJson(sse.data, 'the stream'))) {
          // Events already buffered must not leak out after the caller went away.
          signal.throwIfAborted();
          yield event;
        }
      }
      signal.throwIfAborted();
      const tail = mapper.end(sawDone);
      finished = true;
      yield* tail;
    } catch (err) {
      throw call.explain(err);
    } finally {
      call.close(finished);
    }
  }

  return {
    name: 'openai-compatible',
    chat(request: ChatRequest, signal: AbortSignal) {
      return run('chat', '/chat/completions', toChatBody(request, config), signal);
    },
    complete(request: CompletionRequest, signal: AbortSignal) {
      return run('completion', '/completions', toCompletionBody(request, config), signal);
    },
  };
}
