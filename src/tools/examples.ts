// Examples of /v1/tools for /openapi.json (src/openapi/examples.ts spreads them into its
// list by operationId; test/http/openapi-examples.test.ts checks each against its schema).
const TOOL_ID = 'tool_4Ck2mXbQ9s1LrT0aVnZ7Jp';
const CREATED = '2026-11-24T09:30:00.000Z';
const UPDATED = '2026-11-24T09:30:01.000Z';

const parameters = {
  type: 'object',
  properties: {
    day: { type: 'string', description: 'The day the visitor asks about', enum: ['today', 'tomorrow'] },
  },
  required: ['day'],
};

const tool = {
  tool_id: TOOL_ID,
  name: 'opening_hours',
  description: "Look up the shop's opening hours for a day",
  type: 'webhook',
  parameters,
  url: 'https://shop.example.com/likeness/tools/opening-hours',
  timeout_ms: 3000,
  test: false,
  created_at: CREATED,
  updated_at: CREATED,
};

export const TOOL_EXAMPLES = {
  createTool: {
    request: {
      name: tool.name,
      type: tool.type,
      description: tool.description,
      parameters,
      url: tool.url,
      timeout_ms: tool.timeout_ms,
    },
    responses: {
      201: { ...tool, secret: 'whsec_4mRq8Zt1Kx6Vn0Pc3Hy9Lb2Wd7Fs5Gj1Qa8Te6Uo0Ik=' },
      409: { detail: 'A tool named opening_hours already exists in this account' },
      422: {
        detail: [
          {
            loc: ['body', 'parameters', 'properties', 'day', 'pattern'],
            msg: 'pattern is not supported on a schema of type string',
            type: 'schema_keyword_unsupported',
          },
        ],
      },
    },
  },
  listTools: { responses: { 200: [tool] } },
  getTool: { responses: { 200: tool, 404: { detail: 'Tool not found' } } },
  updateTool: {
    request: { timeout_ms: 5000 },
    responses: { 200: { ...tool, timeout_ms: 5000, updated_at: UPDATED } },
  },
  deleteTool: { responses: {} },
};
