// From tokens to dollars to credits. Credits per dollar is configuration
// (AGENT_API_CREDITS_PER_USD); amounts are micro-units.
import type { Price } from '../providers/remote/openai-compatible/index.ts';
import type { Usage } from '../providers/types.ts';

export function usdFor(price: Price, usage: Pick<Usage, 'inputTokens' | 'outputTokens'>): number {
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}

/** micro-credits for a dollar amount */
export function microCreditsFor(usd: number, creditsPerUsd: number): number {
  return Math.ceil(usd * creditsPerUsd * 1_000_000);
}
