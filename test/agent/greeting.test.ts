// The session's first words (agent/conversation/greeting.ts): for every language mode, in
// that language, with the identity's name and the role its prompt states, never generated.
import { describe, expect, test } from 'bun:test';
import { greetingText, roleFromPrompt } from '../../agent/conversation/greeting.ts';

const TEACHER = 'You are a geography teacher who answers in one short English sentence.';

describe('the greeting', () => {
  test('every language mode greets in its own language (auto: English)', () => {
    const greet = (language: 'auto' | 'en' | 'es' | 'pl' | 'uk') =>
      greetingText({ name: 'Ada', prompt: TEACHER, language });
    expect(greet('en')).toBe("Hi, I'm Ada, a geography teacher. How can I help you today?");
    expect(greet('auto')).toBe(greet('en'));
    // The prompt is English: its role is not said in another language.
    expect(greet('es')).toBe('Hola, soy Ada. ¿En qué puedo ayudarte?');
    expect(greet('pl')).toBe('Dzień dobry, jestem Ada. W czym mogę pomóc?');
    expect(greet('uk')).toBe('Вітаю, я Ada. Чим можу допомогти?');
  });

  test("a prompt in the session's language lends its role", () => {
    expect(
      greetingText({
        name: 'Lucía',
        prompt: 'Eres una profesora de geografía que responde en una frase.',
        language: 'es',
      }),
    ).toBe('Hola, soy Lucía, una profesora de geografía. ¿En qué puedo ayudarte?');
    expect(
      greetingText({ name: 'Олена', prompt: 'Ти — вчитель географії, який відповідає коротко.', language: 'uk' }),
    ).toBe('Вітаю, я Олена, вчитель географії. Чим можу допомогти?');
    // Polish states the role in the instrumental, which reads right only without the name.
    expect(
      greetingText({ name: null, prompt: 'Jesteś przewodnikiem po Krakowie i odpowiadasz krótko.', language: 'pl' }),
    ).toBe('Dzień dobry, jestem przewodnikiem po Krakowie. W czym mogę pomóc?');
  });

  test('the role ends at the first clause and is only taken where the prompt says who the agent is', () => {
    expect(roleFromPrompt('You are Ada, a tour guide in Paris. Marker: 7f3a.', 'en')).toBe('a tour guide in Paris');
    expect(roleFromPrompt("You're an assistant that books tables.", 'en')).toBe('an assistant');
    expect(roleFromPrompt('Answer questions about our return policy.', 'en')).toBeNull();
    expect(roleFromPrompt('You are friendly and concise.', 'en')).toBeNull();
    // Without the dash, Ukrainian "Ти …" is as likely a verb as a role.
    expect(roleFromPrompt('Ти допомагаєш клієнтам.', 'uk')).toBeNull();
    expect(roleFromPrompt(`You are a ${'very '.repeat(10)}long role.`, 'en')).toBeNull();
  });

  test('names that are labels or codes are not said; a name that repeats the role gives way to it', () => {
    expect(greetingText({ name: 'ada_v2', prompt: TEACHER, language: 'en' })).toBe(
      "Hi, I'm a geography teacher. How can I help you today?",
    );
    expect(greetingText({ name: 'Geography teacher', prompt: TEACHER, language: 'en' })).toBe(
      "Hi, I'm a geography teacher. How can I help you today?",
    );
    expect(greetingText({ name: 'Support bot for the EU store', prompt: 'Be brief.', language: 'en' })).toBe(
      'Hello! How can I help you today?',
    );
    expect(greetingText({ name: null, prompt: null, language: 'es' })).toBe('¡Hola! ¿En qué puedo ayudarte?');
  });
});
