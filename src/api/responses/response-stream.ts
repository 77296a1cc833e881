// A response as Responses streaming events, through the one stream driver
// (api/stream-answer.ts): `response.created` and `response.in_progress` first, the
// builder's item events as the model runs, then `response.completed` (or `.incomplete`)
// carrying the final object, which is kept before the event is sent. Every event has a
// `sequence_number` from 0 and is named by its type on the SSE `event:` line. The same
// events go to a WebSocket (`sequenced` and `finalEvents` are shared).
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../../errors.ts';
import { streamAnswer } from '../stream-answer.ts';
import type { OutputBuilder, StreamEvent } from './output-builder.ts';
import { openBuilder, type StartedResponse } from './response-call.ts';

/** Gives each event its sequence number, in the order they are sent. */
export function sequencer(): (e: StreamEvent) => StreamEvent {
  let n = 0;
  return (e) => ({ ...e, sequence_number: n++ });
}

/** The first two events of every response stream. */
export function openingEvents(started: StartedResponse): StreamEvent[] {
  return [
    { type: 'response.created', response: { ...started.initial } },
    { type: 'response.in_progress', response: { ...started.initial } },
  ];
}

/** What closes a finished stream: the closing item events, then the final object's event. */
export async function finalEvents(started: StartedResponse, builder: OutputBuilder, credits: number, usage: import('../../providers/types.ts').Usage): Promise<StreamEvent[]> {
  const closing = builder.close();
  const response = await started.finish(builder, credits, usage);
  return [...closing, { type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response }];
}

/** How a stream that failed once started ends: an `error` event, then `response.failed`. */
export function failureEvents(started: StartedResponse, builder: OutputBuilder, error: ApiError): StreamEvent[] {
  const response = { ...started.initial, status: 'failed', output: builder.shown, error: { code: error.code, message: error.message } };
  return [
    { type: 'error', code: error.code, message: error.message, param: error.param },
    { type: 'response.failed', response },
  ];
}

export function streamResponse(reply: FastifyReply, started: StartedResponse): Promise<FastifyReply> {
  const { builder, events: premade } = openBuilder(started);
  const seq = sequencer();
  return streamAnswer({
    reply,
    meter: started.run,
    signal: started.run.signal,
    events: started.events,
    named: true,
    terminator: null,
    head: [...openingEvents(started), ...premade].map(seq),
    chunk: (e) => builder.add(e).map(seq),
    tail: async (credits, usage) => (await finalEvents(started, builder, credits, usage)).map(seq),
    failure: (error) => failureEvents(started, builder, error).map(seq),
  });
}
