// POST /audio/transcriptions and /audio/translations (the key's Audio switch, checked by
// the pipeline from the contract's `permission`): the call (transcription-call.ts) does
// the work; JSON formats answer an object with svc, text formats text/plain with the
// credits in X-Service-Svc.
import type { FastifyReply } from 'fastify';
import { createTranscription, createTranslation } from '../../contract/endpoints/audio.ts';
import type { Router } from '../../http/router.ts';
import { SVC_HEADER } from '../../contract/fields.ts';
import { transcribe, type TranscriptionForm } from './transcription-call.ts';

function answer(reply: FastifyReply, done: Awaited<ReturnType<typeof transcribe>>) {
  if (!done) return reply;
  reply.header(SVC_HEADER, String(done.svc));
  if ('json' in done) return done.json;
  return reply.type('text/plain; charset=utf-8').send(done.text);
}

export function transcriptionRoutes(router: Router): void {
  const services = router.services;
  router.endpoint(createTranscription, async ({ body, key, request, reply }) => answer(reply, await transcribe(services, request.state, 'transcribe', body as TranscriptionForm, key)));
  router.endpoint(createTranslation, async ({ body, key, request, reply }) => answer(reply, await transcribe(services, request.state, 'translate', body as TranscriptionForm, key)));
}
