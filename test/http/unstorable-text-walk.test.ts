// The walk that refuses text Postgres cannot store (src/http/unstorable-text.ts) reads strings
// and field names, and passes over bytes: a raw body (a recording's chunk, any octet-stream
// body Elysia parses) is data, and walking its entries one by one held the event loop for
// seconds a megabyte.
import { describe, expect, test } from 'bun:test';
import { unstorableText } from '../../src/http/unstorable-text.ts';

describe('the unstorable-text walk', () => {
  test('finds NUL and lone surrogates in strings and names, at any depth', () => {
    const problems = unstorableText({ a: ['ok', 'bad\u0000'], ['b\ud800']: 1 }, ['body']);
    expect(problems.map((problem) => problem.loc)).toEqual([
      ['body', 'b\ud800'],
      ['body', 'a', 1],
    ]);
  });

  test('passes over bytes of every kind, at once', () => {
    const bytes = new Uint8Array(8 * 1024 * 1024);
    const started = performance.now();
    for (const body of [bytes, bytes.buffer, new DataView(bytes.buffer), new Blob([bytes]), { chunk: bytes }])
      expect(unstorableText(body, ['body'])).toEqual([]);
    // Entry by entry this took seconds (4.6 s for 4 MB); skipped, it is nothing.
    expect(performance.now() - started).toBeLessThan(200);
  });
});
