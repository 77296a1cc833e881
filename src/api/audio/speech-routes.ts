// POST /audio/speech (the key's Audio switch, checked by the pipeline from the
// contract's `permission`): the call (speech-call.ts) holds the input's price, starts
// the model's engine and streams its audio, the credits in the X-Service-Svc header.
import { createSpeech } from '../../contract/endpoints/audio.ts';
import type { Router } from '../../http/router.ts';
import { createSpeechAudio } from './speech-call.ts';

export function speechRoutes(router: Router): void {
  const services = router.services;
  router.endpoint(createSpeech, ({ body, key, request, reply }) => createSpeechAudio(services, request.state, body, key, reply));
}
