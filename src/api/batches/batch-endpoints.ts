// The endpoints a batch line may name, each with the contract its bodies are checked
// against and the call that answers it. Families register here as they are offered
// (chat and text completions, responses, embeddings); `POST /batches` takes exactly the
// endpoints registered here (its contract is made from `urls`), so a batch naming any
// other is refused when it is created.
import type { Root } from '../../contract/roots.ts';
import type { EndpointContract } from '../../contract/types.ts';
import type { Call } from '../../pipeline/call.ts';

export interface BatchEndpoint {
  /** As a batch names it, e.g. /v1/chat/completions. */
  readonly url: string;
  readonly contract: EndpointContract;
  /** The root it is under, whose error shape a failed line's body takes (default: the compatible API's). */
  readonly root?: Root;
  /** Answers one checked, admitted call with the endpoint's JSON body (never a stream). */
  run(call: Call): Promise<Record<string, unknown>>;
}

export class BatchEndpoints {
  private readonly byUrl = new Map<string, BatchEndpoint>();

  register(endpoint: BatchEndpoint): void {
    if (this.byUrl.has(endpoint.url)) throw new Error(`batch endpoint ${endpoint.url} is registered twice`);
    this.byUrl.set(endpoint.url, endpoint);
  }

  get(url: string): BatchEndpoint | undefined {
    return this.byUrl.get(url);
  }

  get urls(): string[] {
    return [...this.byUrl.keys()];
  }
}
