// Plausible log probabilities: the emitted token is always the most likely
// one, the alternatives share what is left, so the listed probabilities sum
// to less than 1 and come out sorted.
import type { TokenLogprob } from '../../types.ts';
import type { Rng } from './rng.ts';
import { pieceTokenDetails, utf8Bytes, type Piece } from './tokens.ts';

/** Common tokens offered as alternatives (more than the maximum of 20). */
const ALTERNATIVES = [
  ' the', ' a', ' and', ',', '.', ' to', ' of', ' in', ' is', ' it', ' that', ' for', ' on', ' with', ' as',
  ' I', ' you', ' this', ' be', ' at', ' or', ' not', ' are', ' was', '\n', ' "', ':', ' an', ' by', ' we',
];
const ALTERNATIVE_BYTES = ALTERNATIVES.map(utf8Bytes);

export const MAX_TOP_LOGPROBS = 20;

export function clampTop(top: number | undefined): number {
  return Math.max(0, Math.min(MAX_TOP_LOGPROBS, Math.floor(top ?? 0)));
}

/**
 * Logprobs for the tokens of one streamed piece. Higher temperature lowers
 * the chosen token's probability (within [0.6, 0.999]).
 */
export function pieceLogprobs(piece: Piece, top: number, rng: Rng, temperature: number | undefined): TokenLogprob[] {
  const spread = Math.min(2, Math.max(0.05, temperature ?? 1)) / 2; // (0, 1]
  return pieceTokenDetails(piece).map(({ token, bytes }) => {
    const p = 0.999 - 0.399 * spread * rng.next();
    const logprob = Math.log(p);
    const topLogprobs: TokenLogprob['top_logprobs'] = [];
    if (top > 0) {
      topLogprobs.push({ token, logprob, bytes });
      const rest = 1 - p; // < 0.4, so each alternative stays below p
      let share = rest / 2;
      for (let k = 0, i = rng.int(ALTERNATIVES.length); topLogprobs.length < top && k < ALTERNATIVES.length; k++, i++) {
        const alt = ALTERNATIVES[i % ALTERNATIVES.length] as string;
        if (alt === token) continue;
        // Jitter within (0.9, 1] keeps each entry below half of the previous one's maximum.
        topLogprobs.push({ token: alt, logprob: Math.log(share * (0.9 + 0.1 * rng.next())), bytes: ALTERNATIVE_BYTES[i % ALTERNATIVES.length] as number[] });
        share /= 2;
      }
    }
    return { token, logprob, bytes, top_logprobs: topLogprobs };
  });
}
