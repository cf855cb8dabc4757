// A tool's parameters (src/tools/parameters.ts) without a service: what the model reads when its
// arguments break the schema names the argument by its path, nested ones too; a schema that
// passes the subset rules still compiles before it is kept.
import { expect, test } from 'bun:test';
import { argumentsProblem, parametersProblems } from '../../src/tools/parameters.ts';

const ORDER = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: { sku: { type: 'string', maxLength: 8 }, quantity: { type: 'integer', minimum: 1 } },
        required: ['sku'],
      },
    },
    express: { type: 'boolean' },
  },
  required: ['items'],
};

test('a schema in the subset is kept; its arguments are checked against it', () => {
  expect(parametersProblems(ORDER, ['body', 'parameters'])).toEqual([]);
  expect(argumentsProblem(ORDER, { items: [{ sku: 'A1', quantity: 2 }], express: true })).toBeUndefined();
});

test('nested arguments are named by their path, each problem once, with what to do next', () => {
  const problem = argumentsProblem(ORDER, { items: [{ quantity: 0 }, { sku: 'TOO-LONG-SKU' }], express: 'yes' });
  expect(problem).toStartWith("The arguments do not fit the tool's parameters: ");
  expect(problem).toContain('items.0.sku is required');
  expect(problem).toContain('items.0.quantity must be >= 1');
  expect(problem).toContain('items.1.sku must NOT have more than 8 characters');
  expect(problem).toContain('express must be boolean');
  expect(problem).toEndWith('Call it again with corrected arguments.');
  expect(argumentsProblem(ORDER, {})).toContain('items is required');
});

test('problems are located under the loc given, down to the keyword', () => {
  expect(
    parametersProblems({ type: 'object', properties: { n: { type: 'integer', enum: [1, 1.5] } } }, [
      'body',
      'parameters',
    ]),
  ).toEqual([
    {
      loc: ['body', 'parameters', 'properties', 'n', 'enum'],
      msg: 'every enum value must be of type integer',
      type: 'schema_invalid',
    },
  ]);
  expect(parametersProblems('object', ['body', 'parameters'])).toEqual([
    { loc: ['body', 'parameters'], msg: 'parameters must be a JSON Schema object', type: 'schema_invalid' },
  ]);
});
