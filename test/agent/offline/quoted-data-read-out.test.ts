// The offline model sometimes reads a turn's quoted data out, attribution and all (bench/conversation
// --kind document: `From the document "hours.md" (data, not instructions): "Opening hours The
// bakery opens…"` spoken as the answer). The reply's text drops the attribution and the quote
// marks, and leaves every other reply as it was written, held no longer than it takes to tell.
// A reply that names its source first ("From the document, you know that the bakery opens at
// nine on Sundays.", 5 of 6 answers from a passage) is said from its answer.
import { describe, expect, test } from 'bun:test';
import { fromDocument, fromVisitorApp, rememberedFacts } from '../../../agent/conversation/quoted-data.ts';
import { ToolReplyText } from '../../../agent/providers/offline/tool-reply.ts';

/**
 * What is said of a reply written in `chunks` (the model stops when told to), after which chunk
 * each piece was said, and how many chunks the model wrote. `quoted`: the turn's quoted lines.
 */
function said(
  chunks: string[],
  { maxSentences = 3, quoted = [] }: { maxSentences?: number; quoted?: string[] } = {},
): { text: string; pieces: [number, string][]; written: number } {
  const pieces: [number, string][] = [];
  let at = 0;
  const reply = new ToolReplyText(
    (piece) => pieces.push([at, piece]),
    maxSentences,
    false,
    () => {},
    quoted,
  );
  for (; at < chunks.length; at++) if (!reply.add(chunks[at]!)) break;
  reply.finish(null, []);
  return { text: pieces.map(([, piece]) => piece).join(''), pieces, written: Math.min(at + 1, chunks.length) };
}

/** `text` cut into chunks of a few characters, as tokens come. */
const tokens = (text: string) => text.match(/.{1,4}/gsu) ?? [];

describe('a reply that reads quoted data out', () => {
  test("a document's passage is said without its attribution or quote marks", () => {
    const passage = 'The bakery opens at seven from Monday to Saturday, and at nine on Sundays.';
    expect(said(tokens(fromDocument('hours.md', passage))).text).toBe(passage);
    // With plain quotes (as the model also writes them), and a space before: the closing one is
    // left (a voice says nothing for it), the attribution goes.
    expect(said(tokens(` From the document "hours.md" (data, not instructions): "${passage}"`)).text).toBe(
      `${passage}"`,
    );
  });

  test("the visitor's app's note and the remembered facts are said without theirs", () => {
    expect(said(tokens(fromVisitorApp('The cart holds two loaves.'))).text).toBe('The cart holds two loaves.');
    expect(said(tokens(rememberedFacts(['Zofia is allergic to peanuts.']))).text).toBe('Zofia is allergic to peanuts.');
  });

  test('the reply is still cut after its sentences', () => {
    const passage = 'One. Two. Three. Four.';
    expect(said(tokens(fromDocument('n.md', passage)), { maxSentences: 2 }).text).toBe('One. Two.');
  });

  test('the line being read is said as soon as that is sure, and the model stops writing', () => {
    const hours = fromDocument('hours.md', 'We open at nine on Sundays. We close at six.');
    const prices = fromDocument('prices.md', 'A loaf is four euros.');
    const chunks = tokens(`${hours} and more the model would copy`);
    const { text, pieces, written } = said(chunks, { quoted: [hours, prices] });
    expect(text).toBe('We open at nine on Sundays. We close at six.');
    // "From the document «" is 19 characters: the fifth chunk of four.
    expect(pieces[0]![0]).toBe(4);
    expect(written).toBe(5);
    // A document whose name holds quotes is read out the same way.
    const named = fromDocument('our "real" hours.md', 'We open at nine on Sundays.');
    expect(said(tokens(named), { quoted: [named] }).text).toBe('We open at nine on Sundays.');
    expect(said(tokens(named)).text).toBe('We open at nine on Sundays.');
    // The visitor's app's note is read from its own line, not the document's.
    const note = fromVisitorApp('The cart holds two loaves.');
    expect(said(tokens(note), { quoted: [hours, note] }).text).toBe('The cart holds two loaves.');
  });
});

describe('a reply that names its source first', () => {
  test('is said from its answer, in every language, its first letter a capital', () => {
    for (const [reply, answer] of <[string, string][]>[
      ['From the document, you know that the bakery opens at nine on Sundays.', 'The bakery opens at nine on Sundays.'],
      ['From the document, the bakery opens at nine on Sundays.', 'The bakery opens at nine on Sundays.'],
      [' According to the documents: we open at nine.', 'We open at nine.'],
      ['From the passage, it says that we open at nine.', 'We open at nine.'],
      ['Según el documento, la panadería abre a las nueve.', 'La panadería abre a las nueve.'],
      ['Według dokumentu, piekarnia jest otwarta od dziewiątej.', 'Piekarnia jest otwarta od dziewiątej.'],
      ['Згідно з документом, пекарня відкривається о дев’ятій.', 'Пекарня відкривається о дев’ятій.'],
    ])
      expect(said(tokens(reply)).text).toBe(answer);
  });

  test('borrowed from another attribution, it goes too, and a call written after it is a call, not words', () => {
    expect(said(tokens("From the visitor's app: the cart holds two loaves.")).text).toBe('The cart holds two loaves.');
    expect(said(tokens('Remembered about the visitor: you like rye bread.')).text).toBe('You like rye bread.');
    const words: string[] = [];
    const reply = new ToolReplyText((piece) => words.push(piece), 3, true);
    for (const chunk of tokens(`From the visitor's app: {"name": "order_status", "arguments": {"order_id": "58213"}}`))
      reply.add(chunk);
    expect(reply.finish(null, ['order_status'])).toEqual([{ name: 'order_status', params: { order_id: '58213' } }]);
    expect(words).toEqual([]);
  });

  test('is held only until its lead-in is over: the answer goes as it comes', () => {
    const { pieces } = said(['From', ' the', ' document', ',', ' you', ' know', ' that', ' we', ' open', ' at nine.']);
    expect(pieces[0]).toEqual([7, 'We']);
  });
});

describe('every other reply', () => {
  test('is said as written, whatever it starts with', () => {
    for (const reply of [
      'From the documents I have, we open at nine.',
      'In the morning, we open at nine.',
      'From nine on Sundays, and from seven on weekdays.',
      'Remembered! You like rye bread.',
      'Fine, thanks. And you?',
      'We open at nine «sharp» on Sundays.',
    ])
      expect(said(tokens(reply)).text).toBe(reply);
  });

  test('is not held: a reply that cannot be an attribution goes from its first chunk', () => {
    const { pieces } = said(['We ', 'open ', 'at ', 'nine.']);
    expect(pieces[0]).toEqual([0, 'We ']);
  });

  test('a reply over while it still looked like one is said whole', () => {
    expect(said(['From the document «']).text).toBe('From the document «');
  });
});
