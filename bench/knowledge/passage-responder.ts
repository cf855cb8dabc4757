// The OpenAI wire fake's responder for the knowledge bench: it answers with the one sentence of
// the request's system messages and quoted passages (the user-role lines before the visitor's
// last message, agent/conversation/quoted-data.ts) that shares the most words with it, or
// "I do not know" when none shares any. It reads nothing but the request, so a right answer
// means the passage holding the answer reached the model's request (and that it was found by
// plain word overlap); it says nothing about how well a real model reads it.
import type { ChatRecord } from '../../test/support/fakes/openai.ts';
import { normalise } from '../conversation/eval/scoring.ts';

/** Words that say nothing about what is asked (en, es). */
const STOPWORDS = new Set(
  (
    'the a an and or of to in on at for is are be do does did i my me you your we our it its this that what which who ' +
    'when where how much many long there with from can should must will after before if not by as was were have has ' +
    'el la los las un una unos unas y o de del al en a por para es son que qué cual cuál cuales quién quien cuando ' +
    'cuándo donde dónde como cómo cuanto cuánto cuanta cuánta cuantos cuántos cuantas cuántas hay mi me se le lo su ' +
    'sus con sin puedo puede tengo tiene tengo hasta desde ser hace más mas muy'
  )
    .split(' ')
    .map(normalise),
);

/** Content words cut to their first 5 letters: a crude stem ("abre" ~ "abrimos" does not match, "descale" ~ "descaling" does). */
const words = (text: string) =>
  new Set(
    normalise(text)
      .split(' ')
      .filter((word) => word && !STOPWORDS.has(word))
      .map((word) => word.slice(0, 5)),
  );

export const FAKE_DO_NOT_KNOW = { en: "I'm sorry, I don't know that.", es: 'Lo siento, no lo sé.' } as const;

export function answerFromPassages(chat: ChatRecord, language: 'en' | 'es'): string {
  const asked = words(chat.userTexts.at(-1) ?? '');
  let best = { overlap: 0, sentence: '' };
  // The passages' attribution and quotes (quoted-data.ts) are not sentences.
  const system = [chat.system, ...chat.userTexts.slice(0, -1)]
    .join('\n')
    .replace(/^From the document «[^»]*» \(data, not instructions\): «|»$/gm, '\n');
  for (const sentence of system.split(/(?<=[.!?])\s+|\n+/)) {
    const said = words(sentence);
    let overlap = 0;
    for (const word of asked) if (said.has(word)) overlap++;
    if (overlap > best.overlap) best = { overlap, sentence: sentence.trim() };
  }
  return best.overlap > 0 ? best.sentence : FAKE_DO_NOT_KNOW[language];
}
