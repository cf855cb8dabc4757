// The HTTP contract of /v1/tools (docs/api.md#tools): one schema per request and response,
// validated at the edge and shown in /openapi.json. `parameters` is checked further than a
// schema can say (parameters.ts): the safe subset of JSON Schema, compiled.
import { t } from 'elysia';
import { TestFlag } from '../accounts/index.ts';
import {
  TOOL_DESCRIPTION_MAX_CHARS,
  TOOL_NAME_PATTERN,
  TOOL_TIMEOUT_DEFAULT_MS,
  TOOL_TIMEOUT_MAX_MS,
  TOOL_TYPES,
} from '../contract/agent-tools.ts';
import { Timestamp } from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';

const WEATHER_PARAMETERS = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'The city the visitor asks about' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city'],
};

const Name = t.String({
  pattern: TOOL_NAME_PATTERN,
  error: 'name: 1–64 characters, lowercase letters, digits and _, starting with a letter',
  description: "What the model calls; unique in the account. A client tool's name is also the RPC method.",
  examples: ['get_weather'],
});
const Description = t.String({
  maxLength: TOOL_DESCRIPTION_MAX_CHARS,
  description: 'What the tool does and when to use it, for the model. Required for webhook and client tools.',
  examples: ["Look up today's weather in a city"],
});
const ToolType = oneOf(
  TOOL_TYPES,
  "`webhook`: the service POSTs the call, signed, to `url`; `client`: the visitor's app answers it over LiveKit RPC; `end_session`: the agent says goodbye and ends the session.",
);
const Parameters = t.Record(t.String(), t.Unknown(), {
  description:
    'A JSON Schema of type `object` for the arguments: `properties` whose schemas use only type (string, number, integer, boolean, array, object), description, enum, items, minimum, maximum, minLength, maxLength, properties, required, additionalProperties; at most 16 KB, 5 levels deep. Default: no arguments.',
  examples: [WEATHER_PARAMETERS],
});
const Url = t.String({
  maxLength: 2000,
  description:
    "A webhook tool's receiver, http(s). Its host must resolve to public addresses (unless the operator set WEBHOOKS_ALLOW_PRIVATE); checked again at every call.",
  examples: ['https://example.com/likeness/tools'],
});
const TimeoutMs = t.Integer({
  minimum: 1,
  maximum: TOOL_TIMEOUT_MAX_MS,
  description: `How long a call may take, in milliseconds; default ${TOOL_TIMEOUT_DEFAULT_MS}.`,
  examples: [3000],
});

export const CreateToolRequest = t.Object({
  name: Name,
  type: ToolType,
  description: t.Optional(Description),
  parameters: t.Optional(Parameters),
  url: t.Optional(Url),
  timeout_ms: t.Optional(TimeoutMs),
});

export const UpdateToolRequest = t.Object(
  {
    name: t.Optional(Name),
    description: t.Optional(Description),
    parameters: t.Optional(Parameters),
    url: t.Optional(Url),
    timeout_ms: t.Optional(TimeoutMs),
    type: t.Optional(t.String({ description: 'Immutable: sending it answers 422.' })),
  },
  { minProperties: 1 },
);

export const ToolParams = t.Object({ tool_id: t.String() });

export const ListToolsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: 'Page size; omit for every tool.' })),
  after: t.Optional(t.String({ description: 'tool_id of the last item of the previous page.' })),
});

export const ToolResponse = t.Object({
  tool_id: t.String({ examples: ['tool_4Ck2mXbQ9s1LrT0aVnZ7Jp'] }),
  name: t.String({ examples: ['get_weather'] }),
  description: t.String(),
  type: oneOf(TOOL_TYPES),
  parameters: t.Record(t.String(), t.Unknown(), { examples: [WEATHER_PARAMETERS] }),
  url: t.Union([t.String(), t.Null()], { description: 'Null for client and end_session tools.' }),
  timeout_ms: t.Integer(),
  test: TestFlag,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreatedToolResponse = t.Composite([
  ToolResponse,
  t.Object({
    secret: t.Optional(
      t.String({
        description:
          "A webhook tool's signing secret (`whsec_…`, Standard Webhooks). Shown only in this answer: keep it to verify `webhook-signature`.",
      }),
    ),
  }),
]);
