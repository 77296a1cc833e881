// POST /moderations: the call (moderations-call.ts) reads the input, holds its price,
// scores it and flags each category at its threshold; the answer is the reference's
// moderation object with `svc`.
import { createModeration } from '../../contract/endpoints/moderations.ts';
import type { Router } from '../../http/router.ts';
import { createModerations } from './moderations-call.ts';

export function moderationsRoutes(router: Router): void {
  const services = router.services;
  router.endpoint(createModeration, async ({ body, key, request, reply }) => (await createModerations(services, request.state, body, key)) ?? reply);
}
