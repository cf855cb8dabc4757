// Examples of /v1/visitors and /v1/visitor-tokens for /openapi.json (src/openapi/examples.ts
// spreads them into its list by operationId; test/http/openapi-examples.test.ts checks each
// against its schema).
const IDENTITY_ID = 'idn_5XwBbH2Lr8Nd0qVjYc3TfA';
const FIRST_SESSION = 'ses_9Lq2Wd7Hs3Vx1KbR6DnZmE';
const SECOND_SESSION = 'ses_3Hc8Np1Ws6Qa0YtL5MkVbR';

const visitor = {
  visitor_id: 'crm-4821',
  facts: [
    {
      text: 'Her name is Zofia.',
      identity_id: IDENTITY_ID,
      learned_at: '2026-11-27T09:42:10.000Z',
      session_id: FIRST_SESSION,
    },
    {
      text: 'She is allergic to peanuts.',
      identity_id: IDENTITY_ID,
      learned_at: '2026-11-27T09:42:10.000Z',
      session_id: FIRST_SESSION,
    },
    {
      text: 'She wants a cake for her daughter’s birthday on Saturday.',
      identity_id: IDENTITY_ID,
      learned_at: '2026-11-28T17:05:33.000Z',
      session_id: SECOND_SESSION,
    },
  ],
  created_at: '2026-11-27T09:30:00.000Z',
  updated_at: '2026-11-28T17:05:33.000Z',
  last_session_at: '2026-11-28T16:58:02.000Z',
};

export const VISITOR_EXAMPLES = {
  listVisitors: { responses: { 200: [visitor] } },
  getVisitor: { responses: { 200: visitor, 404: { detail: 'Visitor not found' } } },
  updateVisitor: {
    request: {
      facts: [
        { text: 'Her name is Zofia.', identity_id: IDENTITY_ID },
        { text: 'She is allergic to peanuts and tree nuts.', identity_id: IDENTITY_ID },
      ],
    },
    responses: {
      200: {
        ...visitor,
        facts: [
          visitor.facts[0],
          {
            text: 'She is allergic to peanuts and tree nuts.',
            identity_id: IDENTITY_ID,
            learned_at: '2026-11-29T08:00:00.000Z',
            session_id: null,
          },
        ],
        updated_at: '2026-11-29T08:00:00.000Z',
      },
      422: {
        detail: [
          {
            loc: ['body', 'facts', 1, 'identity_id'],
            msg: 'No identity idn_0000000000000000000000 in this account',
            type: 'unknown_identity',
          },
        ],
      },
    },
  },
  forgetVisitor: { responses: {} },
  createVisitorToken: {
    request: { visitor_id: 'crm-4821', ttl_seconds: 3600 },
    responses: {
      201: {
        visitor_token:
          'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhY2MiOiJhY2NfMSIsInNjb3BlIjoiaWRlbnRpdHkiLCJzdWIiOiJjcm0tNDgyMSJ9.c2lnbmF0dXJl',
        visitor_id: 'crm-4821',
        memory_scope: 'identity',
        expires_at: '2026-11-29T09:00:00.000Z',
      },
    },
  },
};
