// GET /capabilities and GET /openapi.json, generated from the contract tables of the
// endpoints this process offers. Public: they describe the API, they reveal no data.
import type { FastifyRequest } from 'fastify';
import { buildCapabilities } from '../../contract/capabilities.ts';
import { getCapabilities, getOpenApi } from '../../contract/endpoints/models.ts';
import { buildOpenApi } from '../../contract/openapi.ts';
import type { Router } from '../../http/router.ts';

export function metaRoutes(router: Router): void {
  const { config } = router.services;
  const baseUrl = (request: FastifyRequest) => config.publicBaseUrl ?? `${request.protocol}://${request.host}${router.prefix}`;
  // Both documents depend only on the offered endpoints and the base URL: build once per base URL.
  const cache = new Map<string, { capabilities: unknown; openapi: unknown }>();
  const documents = (url: string) => {
    let docs = cache.get(url);
    if (!docs) {
      docs = { capabilities: buildCapabilities(router.offered, url), openapi: buildOpenApi(router.offered, router.publicOps, url) };
      if (cache.size > 16) cache.clear();
      cache.set(url, docs);
    }
    return docs;
  };

  router.endpoint(getCapabilities, async ({ request }) => documents(baseUrl(request)).capabilities, 'none');
  router.endpoint(getOpenApi, async ({ request }) => documents(baseUrl(request)).openapi, 'none');
}
