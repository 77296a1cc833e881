// From tokens to dollars to credits. Credits per dollar is configuration
// (AGENT_API_CREDITS_PER_USD); amounts are micro-units. A model's price is the
// configuration's (the upstream's table, or the offline engines'), read here.
import type { Usage } from '../providers/types.ts';

export interface Price {
  /** USD per million input (prompt) tokens */
  inputPerMTok: number;
  /** USD per million output (completion, reasoning included) tokens */
  outputPerMTok: number;
}

export function usdFor(price: Price, usage: Pick<Usage, 'inputTokens' | 'outputTokens'>): number {
  return (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}

/** micro-credits for a dollar amount */
export function microCreditsFor(usd: number, creditsPerUsd: number): number {
  return Math.ceil(usd * creditsPerUsd * 1_000_000);
}
