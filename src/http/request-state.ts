// The Fastify side of a call: each request carries its Call (pipeline/call.ts) as
// `request.state`, and each route its RouteConfig as `config.agent`.
import type { Call, RouteConfig } from '../pipeline/call.ts';

export type { AuthMode, RouteConfig } from '../pipeline/call.ts';

declare module 'fastify' {
  interface FastifyRequest {
    state: Call;
  }
  interface FastifyContextConfig {
    agent?: RouteConfig;
  }
}
