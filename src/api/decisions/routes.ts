// POST /decisions (the key's Decisions switch, checked by the pipeline from the
// contract's `permission`): the call (decisions-call.ts) reads the input, holds its
// price, answers every question and returns the decision object with `svc`.
import { createDecision } from '../../contract/endpoints/decisions.ts';
import type { Router } from '../../http/router.ts';
import { createDecisions } from './decisions-call.ts';

export function decisionsRoutes(router: Router): void {
  const services = router.services;
  router.endpoint(createDecision, async ({ body, key, request, reply }) => (await createDecisions(services, request.state, body, key)) ?? reply);
}
