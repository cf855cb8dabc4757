// How an offline reply is cut for the voices (agent/providers/offline/reply-chunks.ts): the
// first clause alone and at once (its first four words when it is longer), later ones gathered; a first piece that ends a sentence with
// nothing after it (the tool filler, followed only by the call the model writes) goes at once.
import { describe, expect, test } from 'bun:test';
import type { tokenize } from '@livekit/agents';
import {
  FIRST_PIECE_WORDS,
  ReplyChunker,
  splitClauses,
  splitFirstPiece,
} from '../../../agent/providers/offline/reply-chunks.ts';

/** The next piece the stream emits (spaces folded), or null when none comes within a moment. */
async function nextPiece(stream: tokenize.SentenceStream): Promise<string | null> {
  const next = stream.next().then((result) => (result.done ? null : result.value.token.replace(/\s+/g, ' ').trim()));
  return Promise.race([next, Bun.sleep(300).then(() => null)]);
}

describe('reply pieces', () => {
  test('clauses end at , ; : . ! ? with the space kept', () => {
    expect(splitClauses('Sure, it is sunny. In Paris: mild!')).toEqual([
      'Sure, ',
      'it is sunny. ',
      'In Paris: ',
      'mild!',
    ]);
    expect(splitClauses('No end yet')).toEqual(['No end yet']);
  });

  test('the first clause goes as the next begins; what follows waits for length or the end', async () => {
    const stream = new ReplyChunker().stream();
    stream.pushText('Sure, ');
    expect(await nextPiece(stream)).toBeNull(); // a comma may still be part of a longer clause's context
    stream.pushText('it is');
    expect(await nextPiece(stream)).toBe('Sure,');
    stream.pushText(' sunny. It is');
    expect(await nextPiece(stream)).toBeNull(); // gathered toward a longer piece
    stream.endInput();
    expect(await nextPiece(stream)).toBe('it is sunny. It is');
  });

  test('a first piece that ends a sentence, with nothing after it yet, goes at once', async () => {
    const stream = new ReplyChunker().stream();
    stream.pushText('Let me check. ');
    expect(await nextPiece(stream)).toBe('Let me check.');
    // The words after it (the answer, on a later turn of the stream) are cut as before.
    stream.pushText('It shipped, ');
    stream.pushText('on Friday.');
    expect(await nextPiece(stream)).toBe('It shipped,');
    stream.endInput();
    expect(await nextPiece(stream)).toBe('on Friday.');
  });

  test("the filler as agents' markdown filter passes it on (its line ended) goes at once too", async () => {
    const stream = new ReplyChunker().stream();
    stream.pushText('Let me check.\n');
    expect(await nextPiece(stream)).toBe('Let me check.');
    // Without its line's end the filter keeps the trailing space back: the period alone is no end.
    const held = new ReplyChunker().stream();
    held.pushText('It costs 4.');
    expect(await nextPiece(held)).toBeNull();
  });

  test('a long first clause is cut after its fourth word; a clause that ends sooner is the cut', () => {
    expect(FIRST_PIECE_WORDS).toBe(4);
    expect(splitFirstPiece('The weather in Paris today is sunny, mild.')).toEqual([
      'The weather in Paris ',
      'today is sunny, ',
      'mild.',
    ]);
    expect(splitFirstPiece('Sure thing, I can help you with that.')).toEqual([
      'Sure thing, ',
      'I can help you with that.',
    ]);
    expect(splitFirstPiece('El tiempo en Madrid hoy es soleado.')).toEqual(['El tiempo en Madrid ', 'hoy es soleado.']);
    // Four words and their clause's end together: one clause.
    expect(splitFirstPiece('I am fine today. Thanks')).toEqual(['I am fine today. ', 'Thanks']);
    // The fourth word not yet followed by anything: it may go on ("Paris" → "Parisian").
    expect(splitFirstPiece('The weather in Paris')).toEqual(['The weather in Paris']);
  });

  test('a reply written word by word: its first four words go as the fifth begins, the rest by clauses', async () => {
    const stream = new ReplyChunker().stream();
    for (const word of ['The', ' weather', ' in', ' Paris']) stream.pushText(word);
    expect(await nextPiece(stream)).toBeNull();
    stream.pushText(' today');
    expect(await nextPiece(stream)).toBe('The weather in Paris');
    // Later pieces are clauses, gathered, never cut by words.
    for (const word of [' is', ' sunny', ' with', ' a', ' mild', ' breeze', ' and', ' light']) stream.pushText(word);
    expect(await nextPiece(stream)).toBeNull();
    stream.pushText(' wind.');
    stream.endInput();
    expect(await nextPiece(stream)).toBe('today is sunny with a mild breeze and light wind.');
  });

  test('an unfinished first sentence waits', async () => {
    const stream = new ReplyChunker().stream();
    stream.pushText('Let me check');
    expect(await nextPiece(stream)).toBeNull();
    stream.endInput();
    expect(await nextPiece(stream)).toBe('Let me check');
  });
});
