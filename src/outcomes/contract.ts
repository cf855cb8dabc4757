// The HTTP contract of outcomes (docs/api.md#outcomes): the `outcome_schema` an identity and a
// start take, and what a session shows of its outcome. Checked further than a schema can say by
// schema-rules.ts (the tools' safe subset, described fields).
import { t } from 'elysia';
import { OUTCOME_MAX_FIELDS } from '../contract/index.ts';
import { oneOf } from '../http/enum-schema.ts';
import { SUMMARY_STATUSES } from '../sessions/schema.ts';

export const LEAD_OUTCOME_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', description: "The visitor's name, as they gave it" },
    email: { type: 'string', description: "The visitor's email address" },
    wants_demo: { type: 'boolean', description: 'Whether the visitor asked for a demo' },
    demo_day: {
      type: 'string',
      enum: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
      description: 'The weekday the visitor picked for the demo',
    },
  },
};

/** The OpenAPI example session's (a museum guide's) outcome schema. */
export const MUSEUM_OUTCOME_SCHEMA = {
  type: 'object',
  properties: {
    museums: { type: 'string', description: 'The museums the visitor chose to see' },
    wants_tickets: { type: 'boolean', description: 'Whether the visitor wants to book tickets' },
  },
};

export const LEAD_OUTCOME = { name: 'Zofia Nowak', email: 'zofia@example.com', wants_demo: true, demo_day: 'tuesday' };

export const OutcomeSchemaField = t.Record(t.String(), t.Unknown(), {
  description: `The fields to fill in from the conversation once it ends: a JSON Schema of type \`object\` whose 1–${OUTCOME_MAX_FIELDS} \`properties\` each have a \`description\` (what the visitor must say for it), in the same subset as a tool's \`parameters\` (type, description, enum, items, minimum, maximum, minLength, maxLength, properties, required, additionalProperties; at most 16 KB, 5 levels deep).`,
  examples: [LEAD_OUTCOME_SCHEMA],
});

/** What GET /v1/sessions/{session_id} shows of the outcome. */
export const SessionOutcomeFields = {
  outcome_schema: t.Nullable(t.Record(t.String(), t.Unknown()), {
    description:
      "The schema this session's outcome fills (the start's `outcome_schema`, else its identity's); null: no outcome. In full on GET /v1/sessions/{session_id} only: null in lists.",
  }),
  outcome: t.Nullable(t.Record(t.String(), t.Unknown()), {
    description:
      "Each field of `outcome_schema`, the value the visitor gave or null for one they did not; written by the session's language model once the session ended with a visitor turn. Null until then, or when it could not be written.",
    examples: [LEAD_OUTCOME],
  }),
  outcome_status: oneOf(
    SUMMARY_STATUSES,
    '`none`: no outcome schema, running, or ended without a visitor turn; `pending`: being written; `ready`; `failed`: see `outcome_detail`.',
  ),
  outcome_detail: t.Nullable(t.String({ description: 'Why there is no outcome (`failed`).' })),
};
