// Registers a root's endpoints from their contracts, so a family contributes only its
// contract entries and handlers; the pipeline steps are shared. Whatever is registered
// here is "offered" and appears in the root's published documents (/openapi.json, and
// /capabilities on /v1).
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { BodyOf, EndpointContract, QueryOf } from '../contract/types.ts';
import type { KeyRecord } from '../keys/keys-service.ts';
import { V1, type Root } from '../contract/roots.ts';
import type { Services } from '../services.ts';
import { compileContract } from '../pipeline/contract.ts';
import type { AuthMode, RouteConfig } from './request-state.ts';

type BodyFields<C> = BodyOf<C>;
type QueryFields<C> = QueryOf<C>;

export interface HandlerContext<C extends EndpointContract> {
  request: FastifyRequest;
  reply: FastifyReply;
  body: BodyFields<C>;
  query: QueryFields<C>;
  params: Record<string, string>;
  /** The authenticated key (key-authenticated routes only). */
  key: KeyRecord;
}

export type Handler<C extends EndpointContract> = (ctx: HandlerContext<C>) => Promise<unknown>;

/** `/models/{model}` → `/models/:model` */
export const toFastifyPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

export class Router {
  readonly offered: EndpointContract[] = [];
  /** operationIds answered without a key */
  readonly publicOps = new Set<string>();

  constructor(
    readonly app: FastifyInstance,
    readonly services: Services,
    readonly root: Root = V1,
  ) {
    // The error handler renders by the root a request is under (a matched route's, else by prefix).
    if (!app.roots.includes(root)) app.roots.push(root);
    app.roots.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  get prefix(): string {
    return this.root.prefix;
  }

  /** `auth`: the root's unless the endpoint says otherwise (`none`: public). */
  endpoint<C extends EndpointContract>(contract: C, handler: Handler<C>, auth: AuthMode = this.root.auth): void {
    // Compiled now: a table that cannot work stops start-up, not a request.
    compileContract(contract);
    this.offered.push(contract);
    if (auth === 'none') this.publicOps.add(contract.operationId);
    const config: RouteConfig = { auth, contract, endpoint: this.prefix + contract.path, root: this.root };
    this.app.route({
      method: contract.method as HTTPMethods,
      url: this.prefix + toFastifyPath(contract.path),
      config: { agent: config },
      handler: (request, reply) =>
        handler({
          request,
          reply,
          body: request.state.body as BodyFields<C>,
          query: request.state.query as QueryFields<C>,
          params: contract.params ? request.state.params : (request.params as Record<string, string>),
          key: request.state.key!,
        }),
    });
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The roots registered on this app, longest prefix first (decorated in installPipeline). */
    roots: Root[];
  }
}
