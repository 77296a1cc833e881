// The offline text rules against a labelled set written for the test (at least 150 texts,
// look-alikes included): per-category precision and recall printed, and held to floors.
// Floors: recall 0.8 and precision 0.8 in every category with at least five positives
// (a rule set that misses one text in five, or flags one clean look-alike per four hits,
// is not one an operator could rely on); over all clean texts, at most 5% flagged at all.
// Also: what fired is readable, negation turns a threat around, idioms stay clean, and a
// long hostile text is scored without holding the event loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MODERATION_CATEGORIES } from '../../../contract/endpoints/moderations.ts';
import { HELD_OUT, LABELLED, type Labelled } from './labelled-texts.test-support.ts';
import { scoreText, scoreTextSync } from './text-scorer.ts';

const THRESHOLD = 0.5;

/** Per category: precision and recall at THRESHOLD; the texts missed or wrongly flagged; clean texts flagged at all. */
function measure(set: readonly Labelled[]) {
  const rows: string[] = [];
  const misses: string[] = [];
  let cleanFlagged = 0;
  let clean = 0;
  const perCategory = MODERATION_CATEGORIES.map((category) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const { text, labels } of set) {
      const flagged = scoreTextSync(text).scores[category] >= THRESHOLD;
      const wanted = labels.includes(category);
      if (flagged && wanted) tp++;
      else if (flagged) {
        fp++;
        misses.push(`false ${category}: ${text}`);
      } else if (wanted) {
        fn++;
        misses.push(`missed ${category}: ${text}`);
      }
    }
    const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
    const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
    rows.push(`${category.padEnd(24)} positives ${String(tp + fn).padStart(3)}  precision ${precision.toFixed(2)}  recall ${recall.toFixed(2)}`);
    return { category, positives: tp + fn, precision, recall };
  });
  for (const { text, labels } of set) {
    if (labels.length > 0) continue;
    clean++;
    if (Object.values(scoreTextSync(text).scores).some((s) => s >= THRESHOLD)) cleanFlagged++;
  }
  console.log(`${set.length} texts, ${clean} clean (${cleanFlagged} of them flagged)\n${rows.join('\n')}${misses.length ? `\n${misses.join('\n')}` : ''}`);
  return { perCategory, clean, cleanFlagged };
}

test('the labelled set (the rules were tuned on it): per-category precision and recall at or above their floors', () => {
  assert.ok(LABELLED.length >= 150, `${LABELLED.length} texts`);
  const { perCategory, clean, cleanFlagged } = measure(LABELLED);
  for (const c of perCategory) {
    if (c.positives < 5) continue;
    assert.ok(c.recall >= 0.8, `${c.category} recall ${c.recall.toFixed(2)}`);
    assert.ok(c.precision >= 0.8, `${c.category} precision ${c.precision.toFixed(2)}`);
  }
  assert.ok(cleanFlagged / clean <= 0.05, `${cleanFlagged} of ${clean} clean texts flagged`);
});

test('held out (never tuned on): lower floors, since a rule set generalizes worse than it fits', () => {
  const { perCategory, clean, cleanFlagged } = measure(HELD_OUT);
  // Too few positives per category for per-category floors: held to the pooled figures.
  const positives = perCategory.reduce((n, c) => n + c.positives, 0);
  const found = perCategory.reduce((n, c) => n + c.recall * c.positives, 0);
  assert.ok(found / positives >= 0.7, `pooled recall ${(found / positives).toFixed(2)}`);
  assert.ok(cleanFlagged / clean <= 0.1, `${cleanFlagged} of ${clean} clean texts flagged`);
});

test('what fired is readable; a negation turns a threat around; idioms stay clean', () => {
  const threat = scoreTextSync("I'm going to kill you.");
  assert.ok(threat.fired.some((f) => f.rule === 'threat-you' && f.category === 'harassment/threatening' && !f.negated));
  const never = scoreTextSync('I would never hurt you.');
  assert.ok(never.fired.every((f) => f.negated));
  assert.ok(never.scores.violence < THRESHOLD);
  for (const idiom of ['Kill the process and shoot me an email.', 'She killed it on stage.', 'Execute the plan.']) {
    assert.deepEqual(scoreTextSync(idiom).fired, [], idiom);
  }
  // Parents are at least their subcategories.
  assert.ok(threat.scores.harassment >= threat.scores['harassment/threatening']);
});

test('a long text is scored in slices: the event loop keeps turning, the threat at the end is found', async () => {
  const text = `${'The quick brown fox jumps over the lazy dog. '.repeat(20_000)}I will kill you.`;
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const scored = await scoreText(text);
  clearInterval(timer);
  assert.ok(scored.scores['harassment/threatening'] >= THRESHOLD);
  assert.ok(ticks > 0, 'the event loop turned while scoring');
});
