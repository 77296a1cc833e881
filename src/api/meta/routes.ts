// A root's published documents: GET /openapi.json, and GET /capabilities where the root
// has that contract (the compatible API), generated from the contract tables of the
// endpoints it offers. On a root with public documents (the compatible API) they are
// answered without a key: they describe the API, they reveal no data.
import type { FastifyRequest } from 'fastify';
import { buildCapabilities } from '../../contract/capabilities.ts';
import { buildOpenApi } from '../../contract/openapi.ts';
import { rootUrl } from '../root-url.ts';
import type { Router } from '../../http/router.ts';

/** Registers the documents of the router's root; call it after every other endpoint of the root. */
export function metaRoutes(router: Router): void {
  const { root } = router;
  const getOpenApi = root.endpoints.find((e) => e.method === 'GET' && e.path === '/openapi.json');
  const getCapabilities = root.endpoints.find((e) => e.method === 'GET' && e.path === '/capabilities');
  if (!getOpenApi) throw new Error(`the ${root.id} root declares no GET /openapi.json`);
  const auth = root.publicDocuments ? 'none' : root.auth;
  const { config } = router.services;
  const baseUrl = (request: FastifyRequest) => rootUrl(config.publicBaseUrl, request, router.prefix);
  // Both documents depend only on the offered endpoints (all registered by now) and the
  // base URL. Building the OpenAPI document takes over 100 ms and serializing it tens:
  // both are done here, at start-up, with a placeholder for the base URL; a request only
  // puts its URL in the text (one per base URL is kept).
  const PLACEHOLDER = `https://agent-api.invalid${root.prefix}`;
  let template: { capabilities: string; openapi: string } | undefined;
  const cache = new Map<string, { capabilities: string; openapi: string }>();
  const documents = (url: string) => {
    let docs = cache.get(url);
    if (!docs) {
      // The URL goes in as JSON string content (quotes and backslashes escaped).
      const inJson = JSON.stringify(url).slice(1, -1);
      docs = { capabilities: template!.capabilities.replaceAll(PLACEHOLDER, inJson), openapi: template!.openapi.replaceAll(PLACEHOLDER, inJson) };
      if (cache.size > 16) cache.clear();
      cache.set(url, docs);
    }
    return docs;
  };

  if (getCapabilities) router.endpoint(getCapabilities, async ({ request, reply }) => reply.type('application/json; charset=utf-8').send(documents(baseUrl(request)).capabilities), auth);
  router.endpoint(getOpenApi, async ({ request, reply }) => reply.type('application/json; charset=utf-8').send(documents(baseUrl(request)).openapi), auth);
  // Now that these are offered too.
  template = {
    capabilities: getCapabilities ? JSON.stringify(buildCapabilities(router.offered, PLACEHOLDER)) : '',
    openapi: JSON.stringify(buildOpenApi(router.offered, router.publicOps, PLACEHOLDER, root)),
  };
}
