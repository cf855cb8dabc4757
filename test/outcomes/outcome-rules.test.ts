// The rules an outcome is written under (issue 44 point 1), without a model: the written shape
// (every field, its value or null; closed objects, as OpenAI's strict structured output takes),
// the same shape as node-llama-cpp's grammar generator takes it, the question the model is
// asked, and the grounding that sets to null what the conversation does not support.
import { describe, expect, test } from 'bun:test';
import Ajv from 'ajv';
import { groundedValues, outcomeQuestion } from '../../agent/conversation/outcome.ts';
import { grammarSchema } from '../../agent/providers/offline/json-grammar.ts';
import { writtenOutcomeSchema } from '../../src/contract/index.ts';
import { LEAD_OUTCOME_SCHEMA } from '../../src/outcomes/contract.ts';

const NESTED = {
  type: 'object',
  properties: {
    party: {
      type: 'object',
      description: 'Who comes',
      properties: { adults: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
      required: ['adults'],
    },
    dishes: { type: 'array', description: 'Dishes ordered', items: { type: 'string' } },
  },
};

describe('the written outcome', () => {
  test('every field is required and may be null; objects are closed, their optional properties nullable', () => {
    expect(writtenOutcomeSchema(NESTED)).toEqual({
      type: 'object',
      properties: {
        party: {
          type: ['object', 'null'],
          description: 'Who comes',
          properties: {
            adults: { type: 'integer', minimum: 1 },
            note: { type: ['string', 'null'] },
          },
          required: ['adults', 'note'],
          additionalProperties: false,
        },
        dishes: { type: ['array', 'null'], description: 'Dishes ordered', items: { type: 'string' } },
      },
      required: ['party', 'dishes'],
      additionalProperties: false,
    });
    const written = writtenOutcomeSchema(LEAD_OUTCOME_SCHEMA);
    expect((written.properties as Record<string, { enum?: unknown[] }>).demo_day!.enum).toContain(null);
    const validate = new Ajv({ strict: false }).compile(written);
    expect(validate({ name: null, email: null, wants_demo: null, demo_day: null })).toBe(true);
    expect(validate({ name: 'Zofia', email: null, wants_demo: true, demo_day: 'tuesday' })).toBe(true);
    expect(validate({ name: 'Zofia', email: null, wants_demo: true })).toBe(false);
    expect(validate({ name: 'Zofia', email: null, wants_demo: true, demo_day: 'sunday' })).toBe(false);
  });

  test('for the grammar: nullable objects and arrays as oneOf, enums without a type, no numeric bounds', () => {
    const grammar = grammarSchema(writtenOutcomeSchema(NESTED));
    const party = (grammar.properties as Record<string, Record<string, unknown>>).party!;
    expect(party.oneOf).toEqual([
      {
        type: 'object',
        properties: { adults: { type: 'integer' }, note: { type: ['string', 'null'] } },
        required: ['adults', 'note'],
        additionalProperties: false,
      },
      { type: 'null' },
    ]);
    const lead = grammarSchema(writtenOutcomeSchema(LEAD_OUTCOME_SCHEMA)).properties as Record<
      string,
      Record<string, unknown>
    >;
    expect(lead.demo_day).toEqual({
      enum: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', null],
      description: 'The weekday the visitor picked for the demo',
    });
    expect(lead.wants_demo!.type).toEqual(['boolean', 'null']);
  });

  test('the question: the transcript, each field with its kind and description, null for what was not said', () => {
    const question = outcomeQuestion('Visitor: Hi, I am Zofia.', LEAD_OUTCOME_SCHEMA);
    expect(question.startsWith('Visitor: Hi, I am Zofia.\n\n')).toBe(true);
    expect(question).toContain("- name: The visitor's name, as they gave it");
    expect(question).toContain('- wants_demo (true or false): Whether the visitor asked for a demo');
    expect(question).toContain('- demo_day (one of: monday, tuesday, wednesday, thursday, friday):');
    expect(question).toContain('Use null for every field the visitor did not state');
  });
});

describe('grounding', () => {
  const spoken = (visitor: string, agent = '') => ({ visitor, both: `${visitor}\n${agent}` });

  test('what the visitor said is kept, whatever its case and punctuation', () => {
    const said = spoken("Hi! I'm ZOFIA Nowak, zofia@example.com. I'd like a demo on Tuesday.");
    const answer = { name: 'Zofia Nowak', email: 'zofia@example.com', wants_demo: true, demo_day: 'tuesday' };
    expect(groundedValues(answer, LEAD_OUTCOME_SCHEMA, said)).toEqual({ values: answer, dropped: [] });
  });

  test('a value nobody said is null: an invented name, a day, a yes whose topic never came up', () => {
    const said = spoken('What time do you open on Sundays?', 'We open at ten.');
    const answer = { name: 'John Smith', email: 'john@example.com', wants_demo: true, demo_day: 'tuesday' };
    expect(groundedValues(answer, LEAD_OUTCOME_SCHEMA, said)).toEqual({
      values: { name: null, email: null, wants_demo: null, demo_day: null },
      dropped: ['name', 'email', 'wants_demo', 'demo_day'],
    });
  });

  test('free text must be the visitor’s words (not the agent’s); an enum may be the agent’s confirmation', () => {
    const said = spoken('I want a demo, the second day of the week.', 'Tuesday it is, Ms Nowak.');
    const answer = { name: 'Nowak', email: null, wants_demo: true, demo_day: 'tuesday' };
    expect(groundedValues(answer, LEAD_OUTCOME_SCHEMA, said)).toEqual({
      values: { name: null, email: null, wants_demo: true, demo_day: 'tuesday' },
      dropped: ['name'],
    });
  });

  test('free text is whole words the visitor said, not a part of their email address', () => {
    const schema = { type: 'object', properties: { company: { type: 'string', description: 'Their company' } } };
    expect(groundedValues({ company: 'Ejemplo' }, schema, spoken('Escríbeme a lucia@ejemplo.mx.')).values).toEqual({
      company: null,
    });
    expect(groundedValues({ company: 'Grupo Andino' }, schema, spoken('Soy Carlos, de Grupo Andino.')).values).toEqual({
      company: 'Grupo Andino',
    });
  });

  test("a part of the visitor's name is not their company; a name field keeps it", () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Their name' },
        company: { type: 'string', description: 'Their company' },
      },
    };
    const said = spoken("I'm Lena Fischer and I'd like a demo.");
    expect(groundedValues({ name: 'Lena Fischer', company: 'Fischer' }, schema, said)).toEqual({
      values: { name: 'Lena Fischer', company: null },
      dropped: ['company'],
    });
    // A company named after the family, said as more than the name, stays.
    expect(
      groundedValues(
        { name: 'Lena Fischer', company: 'Fischer Logistik' },
        schema,
        spoken("I'm Lena Fischer, from Fischer Logistik."),
      ).values,
    ).toEqual({ name: 'Lena Fischer', company: 'Fischer Logistik' });
    // A thing's name is not a person's: the city in a company's name stays the city.
    const things = {
      type: 'object',
      properties: {
        company_name: { type: 'string', description: 'Their company' },
        city: { type: 'string', description: 'Where they are' },
        contact_name: { type: 'string', description: 'Who to call' },
      },
    };
    expect(
      groundedValues(
        { company_name: 'Berlin Bikes', city: 'Berlin', contact_name: 'Jonas Weber' },
        things,
        spoken("I'm Jonas Weber from Berlin Bikes, here in Berlin."),
      ).values,
    ).toEqual({ company_name: 'Berlin Bikes', city: 'Berlin', contact_name: 'Jonas Weber' });
    // camelCase names are read by their words too: `contactName` holds a person's name.
    const camel = {
      type: 'object',
      properties: {
        contactName: { type: 'string', description: 'Who to call' },
        company: { type: 'string', description: 'Their company' },
      },
    };
    expect(
      groundedValues({ contactName: 'Lena Fischer', company: 'Fischer' }, camel, spoken("I'm Lena Fischer.")).values,
    ).toEqual({ contactName: 'Lena Fischer', company: null });
  });

  test('a day of the week said in Spanish, Polish or Ukrainian picks the English enum value; another day does not', () => {
    const answer = { name: null, email: null, wants_demo: true, demo_day: 'tuesday' };
    for (const sentence of ['Quiero una demo el martes.', 'Chcę demo we wtorek.', 'Хочу демо у вівторок.'])
      expect(groundedValues(answer, LEAD_OUTCOME_SCHEMA, spoken(sentence)).values.demo_day).toBe('tuesday');
    expect(
      groundedValues(answer, LEAD_OUTCOME_SCHEMA, spoken('Quiero una demo el jueves.')).values.demo_day,
    ).toBeNull();
  });

  test('a field the answer lacks is null; nulls stay null', () => {
    expect(groundedValues({ name: null }, LEAD_OUTCOME_SCHEMA, spoken('hello'))).toEqual({
      values: { name: null, email: null, wants_demo: null, demo_day: null },
      dropped: [],
    });
  });
});
