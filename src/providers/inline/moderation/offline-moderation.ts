// The offline moderation engine (issue 21 item 2): text scored by the rules of
// text-scorer.ts, each input on its own. Images are not scored offline yet (the packaged
// image classifier is still to come): a request with an image part is refused before it
// runs (api/moderations), so nothing here claims to have looked at one.
import type { ModerationProvider, ModerationScores } from '../../types.ts';
import { MODERATION_CATEGORIES } from '../../../contract/endpoints/moderations.ts';
import { combine, scoreText, type Fired } from './text-scorer.ts';

export function createOfflineModeration(): ModerationProvider {
  return {
    name: 'offline',
    async moderate({ inputs }, signal) {
      const out: ModerationScores[] = [];
      for (const input of inputs) {
        const fired: Fired[] = [];
        for (const text of input.texts) fired.push(...(await scoreText(text, signal)).fired);
        const scores = combine(fired);
        const textTypes = input.texts.length > 0 ? (['text'] as const) : [];
        out.push({
          scores,
          appliedTo: Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, [...textTypes]])),
          fired: fired.map(({ rule, category, weight, negated }) => ({ rule, category, weight, negated })),
        });
      }
      return out;
    },
  };
}
