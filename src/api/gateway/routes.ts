// The gateway root's endpoints (root GATEWAY, contract/roots.ts): the forwarded ones
// (forward.ts), and /key, /credits and /generation answered by the service
// (account-view.ts). The pipeline (key and its AI gateway switch, limits, activity) is
// the one every root runs on.
import { gatewayCredits, gatewayForwarded, gatewayGeneration, gatewayKey } from '../../contract/endpoints/gateway.ts';
import { invalidRequest } from '../../errors.ts';
import type { Router } from '../../http/router.ts';
import { accountCredits, generation, keyInfo } from './account-view.ts';
import { forward, type GatewayDeps } from './forward.ts';

export function gatewayRoutes(router: Router, deps: GatewayDeps): void {
  const services = router.services;
  for (const contract of gatewayForwarded) router.endpoint(contract, ({ request, reply, key }) => forward(services, deps, request, reply, key));
  router.endpoint(gatewayKey, ({ key }) => keyInfo(services, key));
  router.endpoint(gatewayCredits, ({ key }) => accountCredits(services, key));
  router.endpoint(gatewayGeneration, ({ key, query }) => {
    if (query.id === undefined) throw invalidRequest("Missing required parameter: 'id' (the generation id).", 'id');
    return generation(services, key, query.id);
  });
}
