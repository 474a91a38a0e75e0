/** The one formatter from valibot's issues to longhaul's messages: the field's path, then what is allowed. */
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { object, problemsOf, rule, shape } from '../../src/common/schema';

describe('problemsOf', () => {
  const schema = v.pipe(
    object(
      {
        name: v.string('must be a string'),
        items: v.optional(v.array(object({ size: v.pipe(v.number('must be a number'), v.minValue(1, (issue) => `must be at least 1 (got ${String(issue.input)})`)) }))),
        low: v.optional(v.number()),
        high: v.optional(v.number()),
        feed: v.optional(v.custom<string>(() => false, (issue) => `{=}${JSON.stringify(issue.input)} is not one of /repos/{owner}/{repo}/events`)),
      },
      'input must be an object',
    ),
    rule(['low', 'high'], (x) => (x.high ?? 0) >= (x.low ?? 0), (x) => `(${x.high}) must be at least {.low} (${x.low})`, 'high'),
  );

  it('puts the path in front of what is allowed, with array positions', () => {
    expect(problemsOf(schema, { name: 1, items: [{ size: 3 }, { size: 0 }] })).toEqual(['name must be a string', 'items[1].size must be at least 1 (got 0)']);
    expect(problemsOf(schema, { name: 'x', items: [{ size: 2 }] })).toEqual([]);
  });

  it('judges a missing field like one given as undefined, with its own message', () => {
    expect(problemsOf(schema, {})).toEqual(['name must be a string']);
  });

  it('names the input itself without a path, and refuses arrays and null as objects', () => {
    expect(problemsOf(schema, null)).toEqual(['input must be an object']);
    expect(problemsOf(schema, [])).toEqual(['input must be an object']);
  });

  it('names a sibling field by its path under the root, and checks a rule only once its fields are valid', () => {
    expect(problemsOf(schema, { name: 'x', low: 5, high: 2 }, 'poll')).toEqual(['poll.high (2) must be at least poll.low (5)']);
    expect(problemsOf(schema, { name: 'x', low: 'five', high: 2 }, 'poll')).toEqual(['poll.low must be number (got "five")']);
  });

  it('keeps a message that names its own subject, and the braces of an echoed value', () => {
    expect(problemsOf(schema, { name: 'x', feed: '/x/{low}' })).toEqual(['"/x/{low}" is not one of /repos/{owner}/{repo}/events']);
  });

  it('fills {root} and {key} for messages in the words of an answer', () => {
    const answer = shape({ id: v.number('{=}{root} has no {key}') });
    expect(problemsOf(answer, {}, 'the body')).toEqual(['the body has no id']);
  });
});
