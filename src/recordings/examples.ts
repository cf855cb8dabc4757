// Examples of a session's recording and captions, and of an account's recording storage, for /openapi.json (src/openapi/examples.ts
// spreads them into its list by operationId; test/http/openapi-examples.test.ts checks each
// against its schema).
const SESSION_ID = 'ses_7QmZk4Wp1Hs9Vx2LbR6DnE';
const KEY = `recordings/${SESSION_ID}/recording.mp4`;

/** An account's own bucket, as GET /v1/recording-storage answers it: never the secret. */
const STORAGE = {
  store: 'customer',
  endpoint: 'https://s3.eu-central-1.amazonaws.com',
  bucket: 'acme-avatar-recordings',
  region: 'eu-central-1',
  prefix: 'likeness/',
  access_key_id: 'AKIAIOSFODNN7EXAMPLE',
  secret_set: true,
  retention_days: null,
  updated_at: '2026-11-24T08:12:40.000Z',
};

export const RECORDING_EXAMPLES = {
  getSessionRecording: {
    responses: {
      200: {
        session_id: SESSION_ID,
        status: 'ready',
        reason: null,
        duration_seconds: 168.4,
        size_bytes: 21_734_112,
        store: 'service',
        download_url: `https://likeness.example/assets/${KEY}?expires=1795586400&signature=Qx1d7m0VtKf3ZrN8bLw2yHc5JpA9sUe4GiO6nTkRjXM`,
        object_key: null,
        created_at: '2026-11-24T09:30:00.000Z',
        ready_at: '2026-11-24T09:33:05.000Z',
        deleted_at: null,
      },
      404: { detail: 'This session was not recorded' },
    },
  },
  deleteSessionRecording: {
    responses: {
      409: { detail: 'The recording is processing: delete it once it is ready or failed' },
    },
  },
  getSessionCaptions: {
    responses: { 404: { detail: 'Session not found' } },
  },
  putRecordingStorage: {
    request: {
      endpoint: 'https://s3.eu-central-1.amazonaws.com',
      bucket: 'acme-avatar-recordings',
      region: 'eu-central-1',
      prefix: 'likeness/',
      access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      secret_access_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      retention_days: null,
    },
    responses: {
      200: STORAGE,
      422: {
        detail: [
          {
            loc: ['body', 'bucket'],
            msg: 'writing a test object to the bucket acme-avatar-recordings failed: AccessDenied: Access Denied',
            type: 'storage_check_failed',
          },
        ],
      },
      503: {
        detail:
          "This service cannot keep a bucket's secret: its operator must set RECORDING_STORAGE_KEY (32 bytes, base64 or hex) first",
      },
    },
  },
  getRecordingStorage: {
    responses: {
      200: STORAGE,
      404: { detail: 'No recording storage is set: recordings go to the service store' },
    },
  },
  deleteRecordingStorage: { responses: {} },
};
