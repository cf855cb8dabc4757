// Examples of /v1/publishable-keys and POST /v1/embed/sessions for /openapi.json
// (src/openapi/examples.ts spreads them into its list by operationId; test/http/openapi-examples.test.ts
// checks each against its schema).
const KEY_ID = 'pbk_2xVb7Qm4LpZ9sK1cN8rT5w';
const IDENTITY_ID = 'idn_5XwBbH2Lr8Nd0qVjYc3TfA';
const SESSION_ID = 'ses_9Lq2Wd7Hs3Vx1KbR6DnZmE';
const CREATED = '2026-11-27T09:30:00.000Z';
const UPDATED = '2026-11-27T09:31:00.000Z';

const key = {
  publishable_key_id: KEY_ID,
  publishable_key: 'lk_pub_6fQ2mN8xLk1Vb4Zr7Tc0Hs9Wd3Py5Ju2Ga6Ee1Oi8Rt',
  name: 'Shop website',
  allowed_origins: ['https://shop.example', 'https://www.shop.example'],
  identity_ids: [IDENTITY_ID],
  limits: {
    sessions_per_minute: 10,
    concurrent_sessions: 5,
    visitor_sessions_per_minute: 3,
    visitor_concurrent_sessions: 1,
  },
  record_sessions: null,
  test: false,
  created_at: CREATED,
  updated_at: CREATED,
  last_used_at: null,
  revoked_at: null,
};

export const PUBLISHABLE_KEY_EXAMPLES = {
  createPublishableKey: {
    request: { name: key.name, allowed_origins: key.allowed_origins, identity_ids: key.identity_ids },
    responses: {
      201: key,
      422: {
        detail: [
          {
            loc: ['body', 'allowed_origins', 0],
            msg: '"https://shop.example/contact" is not an origin: scheme, host and optional port, no path (e.g. https://shop.example)',
            type: 'origin_invalid',
          },
        ],
      },
    },
  },
  listPublishableKeys: { responses: { 200: [key] } },
  getPublishableKey: { responses: { 200: key, 404: { detail: 'Publishable key not found' } } },
  updatePublishableKey: {
    request: { limits: { concurrent_sessions: 20 } },
    responses: { 200: { ...key, limits: { ...key.limits, concurrent_sessions: 20 }, updated_at: UPDATED } },
  },
  revokePublishableKey: { responses: {} },
  startEmbedSession: {
    request: { identity_id: IDENTITY_ID, form_factor: 'phone' },
    responses: {
      200: {
        session_id: SESSION_ID,
        room_name: SESSION_ID,
        token: 'eyJhbGciOiJIUzI1NiJ9.eyJ2aWRlbyI6eyJyb29tIjoic2VzXzlMcTJXZDdIczNWeDFLYlI2RG5abUUifX0.c2lnbmF0dXJl',
        rtc_url: 'wss://likeness.example',
        visual_awareness: true,
        max_duration_seconds: 1800,
        test: false,
        record: false,
      },
      403: {
        detail: "This page's origin (https://evil.example) may not use this key: add it to the key's allowed_origins",
      },
      429: { detail: 'You started 3 conversations in the last minute; retry in 41 s' },
    },
  },
};
