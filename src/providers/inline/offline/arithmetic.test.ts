import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, findArithmetic, formatNumber } from './arithmetic.ts';

test('evaluates + - * / ^ with precedence and parentheses', () => {
  assert.equal(evaluate('12 * 7'), 84);
  assert.equal(evaluate('2 + 3 * 4'), 14);
  assert.equal(evaluate('(2 + 3) * 4'), 20);
  assert.equal(evaluate('10 - 4 - 3'), 3); // left-associative
  assert.equal(evaluate('2 ^ 3 ^ 2'), 512); // right-associative
  assert.equal(evaluate('-3 * -(2 + 1)'), 9);
  assert.equal(evaluate('7 / 2'), 3.5);
  assert.equal(evaluate('1 / 0'), null);
});

test('refuses anything that is not arithmetic (never eval)', () => {
  for (const src of ['process.exit(1)', '2 +', '(1 + 2', '1 2', 'alert(1)', '']) assert.equal(evaluate(src), undefined, src);
});

test('finds the arithmetic a message asks for', () => {
  assert.deepEqual(findArithmetic('What is 12 * 7?'), { expression: '12 * 7', value: 84 });
  assert.equal(findArithmetic('what is (3+4)*2')?.value, 14);
  assert.equal(findArithmetic('What is 6 times 7?')?.value, 42);
  assert.equal(findArithmetic('calculate 100 divided by 8')?.value, 12.5);
  assert.equal(findArithmetic('15 - 4')?.value, 11);
  assert.equal(findArithmetic('I was born in 1990 and have 2 cats'), undefined);
  assert.equal(findArithmetic('Meet me on 2024-01-15 at the station'), undefined);
});

test('formats results without float noise', () => {
  assert.equal(formatNumber(0.1 + 0.2), '0.3');
  assert.equal(formatNumber(84), '84');
});
