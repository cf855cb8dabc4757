// Examples of /v1/webhooks for /openapi.json (src/openapi/examples.ts spreads them into its
// list by operationId; test/http/openapi-examples.test.ts checks each against its schema).
const CREATED = '2026-11-24T09:30:00.000Z';

const webhook = {
  webhook_id: 'whk_4Tq8Zn1Vc6Lm3Rx9Pw2KdJ',
  url: 'https://crm.example.com/likeness/events',
  events: ['session.ended', 'credits.low'],
  description: 'Billing system',
  enabled: true,
  test: false,
  created_at: CREATED,
  updated_at: CREATED,
};

const delivery = {
  delivery_id: 'dlv_6Yh3Mk8Pq1Wz5Cv0Nt7RbS',
  message_id: 'msg_0Lr4Tw9Xe2Jd6Fq3Vn8HaK',
  event_type: 'session.ended',
  status: 'delivered',
  attempts: 2,
  response_status: 200,
  last_error: null,
  next_attempt_at: null,
  created_at: '2026-11-24T09:32:50.000Z',
  delivered_at: '2026-11-24T09:32:55.300Z',
  attempt_log: [
    { at: '2026-11-24T09:32:50.020Z', status_code: 503, error: 'answered 503: upstream unavailable', duration_ms: 41 },
    { at: '2026-11-24T09:32:55.250Z', status_code: 200, error: null, duration_ms: 38 },
  ],
};

export const WEBHOOK_EXAMPLES = {
  createWebhook: {
    request: {
      url: 'https://crm.example.com/likeness/events',
      events: ['session.ended', 'credits.low'],
      description: 'Billing system',
    },
    responses: {
      201: { ...webhook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2bK8rV2zQ+E=' },
      422: {
        detail: [
          {
            loc: ['body', 'url'],
            msg: 'url: 10.0.0.7 is not a public address (private, loopback, link-local or reserved)',
            type: 'url_not_allowed',
          },
        ],
      },
    },
  },
  listWebhooks: { responses: { 200: { webhooks: [webhook] } } },
  getWebhook: { responses: { 200: webhook, 404: { detail: 'Webhook not found' } } },
  updateWebhook: { request: { enabled: false }, responses: { 200: { ...webhook, enabled: false } } },
  deleteWebhook: { responses: {} },
  testWebhook: {
    responses: {
      202: {
        ...delivery,
        delivery_id: 'dlv_2Nw7Xc4Rt9Kp1Vm6Hb3ZqL',
        message_id: 'msg_8Fj2Lq5Wc0Ys7Dn4Tx1VaR',
        event_type: 'webhook.test',
        status: 'pending',
        attempts: 0,
        response_status: null,
        next_attempt_at: CREATED,
        delivered_at: null,
        attempt_log: [],
      },
    },
  },
  listWebhookDeliveries: { responses: { 200: { deliveries: [delivery] } } },
};
