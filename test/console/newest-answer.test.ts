// Two loads of a console list in flight (src/console/web/newest-answer.ts): the one asked last
// renders, whichever answers first; the keys page's first load answering after a new key's
// reload no longer brings back the list without that key.
import { expect, test } from 'bun:test';
import { newestAnswer } from '../../src/console/web/newest-answer.ts';

test('only the newest of the loads in flight renders, whatever order they answer in', async () => {
  const ask = newestAnswer();
  const rendered: string[] = [];
  const load = async (list: string, answersAfterMs: number) => {
    const newest = ask();
    await Bun.sleep(answersAfterMs);
    if (newest()) rendered.push(list);
  };
  // The page's first load answers late; the reload after the create answers first.
  await Promise.all([load('one key', 60), load('two keys', 10)]);
  expect(rendered).toEqual(['two keys']);
  // In order, each renders.
  await load('three keys', 0);
  await load('four keys', 0);
  expect(rendered).toEqual(['two keys', 'three keys', 'four keys']);
});
