// The held-out evaluation set (issue 14): short spoken questions a visitor might ask a
// persona, each with the words a right answer contains (any one of them, case- and
// accent-insensitive). The persona is the identity every session of the evaluation uses.
import type { SpokenLanguage } from '../../../src/contract/index.ts';

export const PERSONA = {
  name: 'Ada',
  prompt: 'You are Ada, a friendly geography teacher. Answer every question in one short sentence.',
};

export interface EvalQuestion {
  language: SpokenLanguage;
  text: string;
  /** A reply is right when it contains any of these. */
  expect: string[];
  kind: 'fact' | 'persona';
}

const q = (language: SpokenLanguage, kind: EvalQuestion['kind'], text: string, ...expect: string[]): EvalQuestion => ({
  language,
  kind,
  text,
  expect,
});

export const QUESTIONS: EvalQuestion[] = [
  q('en', 'fact', 'What is the capital of France?', 'paris'),
  q('en', 'fact', 'What is the capital of Spain?', 'madrid'),
  q('en', 'fact', 'What is the capital of Italy?', 'rome'),
  q('en', 'fact', 'What is the capital of Germany?', 'berlin'),
  q('en', 'fact', 'What is the capital of Japan?', 'tokyo'),
  q('en', 'fact', 'What is the capital of England?', 'london'),
  q('en', 'fact', 'What is the capital of Canada?', 'ottawa'),
  q('en', 'fact', 'What is the capital of Poland?', 'warsaw'),
  q('en', 'fact', 'What is the capital of Portugal?', 'lisbon'),
  q('en', 'fact', 'What is the largest ocean on Earth?', 'pacific'),
  q('en', 'fact', 'Which ocean lies between Europe and America?', 'atlantic'),
  q('en', 'fact', 'What is the longest river in Africa?', 'nile'),
  q('en', 'fact', 'What is the tallest mountain in the world?', 'everest'),
  q('en', 'fact', 'Which continent is Egypt in?', 'africa'),
  q('en', 'fact', 'Which continent is Brazil in?', 'south america'),
  q('en', 'fact', 'What is the largest country in the world?', 'russia'),
  q('en', 'fact', 'What language do people speak in Brazil?', 'portuguese'),
  q('en', 'fact', 'How many continents are there?', 'seven', '7'),
  q('en', 'fact', 'What is the biggest desert in Africa?', 'sahara'),
  q('en', 'fact', 'In which country is the Eiffel Tower?', 'france', 'paris'),
  q('en', 'fact', 'What is the largest planet in our solar system?', 'jupiter'),
  q('en', 'fact', 'What planet do we live on?', 'earth'),
  q('en', 'fact', 'Which star gives us light during the day?', 'sun'),
  q('en', 'fact', 'What color is the sky on a clear day?', 'blue'),
  q('en', 'fact', 'How many days are in a week?', 'seven', '7'),
  q('en', 'fact', 'What is the opposite of hot?', 'cold'),
  q('en', 'fact', 'What do bees make?', 'honey'),
  q('en', 'fact', 'What is frozen water called?', 'ice'),
  q('en', 'fact', 'How many legs does a spider have?', 'eight', '8'),
  q('en', 'persona', 'What is your name?', 'ada'),
  q('en', 'persona', 'What subject do you teach?', 'geography'),
  q('en', 'persona', 'Are you a teacher?', 'yes', 'teacher'),
  q('en', 'persona', 'Who are you?', 'ada', 'teacher'),
  q('en', 'persona', 'Can you help me learn geography?', 'yes', 'sure', 'of course', 'happy', 'glad', 'love'),

  q('es', 'fact', '¿Cuál es la capital de Francia?', 'paris'),
  q('es', 'fact', '¿Cuál es la capital de España?', 'madrid'),
  q('es', 'fact', '¿Cuál es la capital de Italia?', 'roma'),
  q('es', 'fact', '¿Cuál es la capital de Alemania?', 'berlin'),
  q('es', 'fact', '¿Cuál es la capital de Japón?', 'tokio', 'tokyo'),
  q('es', 'fact', '¿Cuál es la capital de Portugal?', 'lisboa'),
  q('es', 'fact', '¿Cuál es el océano más grande del mundo?', 'pacifico'),
  q('es', 'fact', '¿Cuál es el río más largo de África?', 'nilo'),
  q('es', 'fact', '¿Cuál es la montaña más alta del mundo?', 'everest'),
  q('es', 'fact', '¿En qué continente está Egipto?', 'africa'),
  q('es', 'fact', '¿Qué idioma se habla en Brasil?', 'portugues'),
  q('es', 'fact', '¿Cuál es el desierto más grande de África?', 'sahara'),
  q('es', 'fact', '¿En qué país está la Torre Eiffel?', 'francia', 'paris'),
  q('es', 'fact', '¿Cuántos días tiene una semana?', 'siete', '7'),
  q('es', 'fact', '¿De qué color es el cielo?', 'azul'),
  q('es', 'fact', '¿Qué hacen las abejas?', 'miel'),
  q('es', 'fact', '¿Cuántas patas tiene una araña?', 'ocho', '8'),
  q('es', 'fact', '¿En qué planeta vivimos?', 'tierra'),
  q('es', 'persona', '¿Cómo te llamas?', 'ada'),
  q('es', 'persona', '¿Qué asignatura enseñas?', 'geografia'),

  q('pl', 'fact', 'Jaka jest stolica Francji?', 'paryz'),
  q('pl', 'fact', 'Jaka jest stolica Polski?', 'warszawa'),
  q('pl', 'fact', 'Jaka jest stolica Niemiec?', 'berlin'),
  q('pl', 'fact', 'Ile dni ma tydzień?', 'siedem', '7'),
  q('pl', 'fact', 'Jaki jest największy ocean na świecie?', 'spokojny', 'pacyfik'),
  q('pl', 'persona', 'Jak masz na imię?', 'ada'),

  q('uk', 'fact', 'Яка столиця Франції?', 'париж'),
  q('uk', 'fact', 'Яка столиця України?', 'київ', 'киів'),
  q('uk', 'fact', 'Яка столиця Польщі?', 'варшава'),
  q('uk', 'fact', 'Скільки днів у тижні?', 'сім', '7'),
  q('uk', 'fact', 'Який найбільший океан у світі?', 'тихий'),
  q('uk', 'persona', 'Як тебе звати?', 'ада'),
];

/**
 * Questions asked with a hesitation where people hesitate, mid-phrase (most first halves end on
 * a word no sentence ends on; "Which country has" and "¿En qué continente" do not): `first`, a pause (the bench's --pause-ms), then `second`.
 * An end-of-turn detection that answers `first` alone cut the visitor off.
 */
export interface HesitantQuestion extends EvalQuestion {
  first: string;
  second: string;
}

const h = (language: SpokenLanguage, first: string, second: string, ...expect: string[]): HesitantQuestion => ({
  language,
  kind: 'fact',
  text: `${first} ${second}`,
  first,
  second,
  expect,
});

export const HESITANT_QUESTIONS: HesitantQuestion[] = [
  h('en', 'What is the capital of', 'France?', 'paris'),
  h('en', 'How many days are in', 'a week?', 'seven', '7'),
  h('en', 'What is the largest ocean on', 'Earth?', 'pacific'),
  h('en', 'Which country has', 'the city of Rome?', 'italy'),
  h('en', 'What is the longest river', 'in Africa?', 'nile'),
  h('en', 'Can you tell me the capital of', 'Japan?', 'tokyo'),
  h('en', 'What is the name of the', 'red planet?', 'mars'),
  h('en', 'I would like to know the highest mountain in', 'the world.', 'everest'),
  h('en', 'What color is the sky on', 'a clear day?', 'blue'),
  h('en', 'Tell me, what is the capital of', 'Germany?', 'berlin'),
  h('en', 'Which river flows through', 'London?', 'thames'),
  h('es', '¿Cuál es la capital de', 'Francia?', 'paris'),
  h('es', '¿Cuántos días tiene', 'una semana?', 'siete', '7'),
  h('es', '¿Cuál es el río más largo', 'de África?', 'nilo'),
  h('es', '¿En qué continente', 'está Egipto?', 'africa'),
];
