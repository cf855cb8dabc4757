// Goodbyes told by a rule (agent/conversation/farewells.ts, issue 45 point 7): with the offline
// model, a farewell ends the session through the identity's end_session tool. At least 9 of 10
// goodbyes in each language are told, and none of 20 ordinary turns, several of them built to
// look like one (a goodbye asked about, a "see you" in a sentence, thanks on their own).
import { expect, test } from 'bun:test';
import { isFarewell } from '../../agent/conversation/farewells.ts';

const GOODBYES: Record<string, string[]> = {
  en: [
    'Thanks, goodbye!',
    'Okay, that is all, thank you. Bye!',
    'Goodbye for now.',
    'Bye-bye!',
    'Thank you so much, have a nice day.',
    'Great, see you later.',
    "That's all I needed, thanks.",
    'I have to go now, bye.',
    'alright then take care',
    'Perfect, thanks for your help. Good night!',
  ],
  es: [
    'Gracias, adiós.',
    'Vale, hasta luego.',
    'Muchas gracias, ¡adiós!',
    'Eso es todo, gracias.',
    'Nos vemos.',
    'Perfecto, hasta pronto.',
    'Bueno, chao.',
    'Gracias por tu ayuda, hasta mañana.',
    'Adios, que tengas un buen día.',
    'Tengo que irme, adiós.',
  ],
  pl: [
    'Dziękuję, do widzenia!',
    'Dobrze, na razie.',
    'To wszystko, dzięki.',
    'Pa pa!',
    'Dziękuję bardzo, do zobaczenia.',
    'Okej, dobranoc.',
    'Do widzenia.',
    'Muszę iść, do widzenia.',
    'Dobrze, to wszystko, dziękuję.',
    'Na razie!',
  ],
  uk: [
    'Дякую, до побачення!',
    'Добре, бувай.',
    'Це все, дякую.',
    'До побачення.',
    'Гаразд, на все добре.',
    'Па-па!',
    'Дякую, на добраніч.',
    'Бувайте!',
    'Мені треба йти, до побачення.',
    'Добре, це все.',
  ],
};

const ORDINARY = [
  'How do I say goodbye in Spanish?',
  'By the way, do you sell lights',
  'I see you have a sale on helmets.',
  'My daughter said bye to her old bike, she needs a new one.',
  'Thanks!',
  'Okay, thanks.',
  "That's all very interesting, but how much is it",
  'Hasta qué hora abren',
  '¿Hasta luego abren hoy?',
  'Gracias por la información, ¿y los cascos?',
  'Nos vemos el sábado para recoger la bici, ¿vale?',
  'Take care of my bike please, it is old.',
  'Have a look at my order 4417.',
  'Good, what about the price',
  'Is that all you have',
  "I'll see you tomorrow at ten to pick it up and pay",
  'Dziękuję, a ile kosztuje dętka?',
  'Дякую, а коли ви відчиняєтесь?',
  'Goodbye is the name of the shop next door',
  'See you in court is what my neighbour said about his bike',
];

test('at least 9 of 10 goodbyes in each language end the conversation', () => {
  for (const [language, goodbyes] of Object.entries(GOODBYES)) {
    const missed = goodbyes.filter((turn) => !isFarewell(turn));
    expect({ language, missed: missed.length >= 2 ? missed : [] }).toEqual({ language, missed: [] });
  }
});

test('none of 20 ordinary turns does', () => {
  expect(ORDINARY).toHaveLength(20);
  expect(ORDINARY.filter(isFarewell)).toEqual([]);
});
