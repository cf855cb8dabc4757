// Examples of a session's recording and captions for /openapi.json (src/openapi/examples.ts
// spreads them into its list by operationId; test/http/openapi-examples.test.ts checks each
// against its schema).
const SESSION_ID = 'ses_7QmZk4Wp1Hs9Vx2LbR6DnE';
const KEY = `recordings/${SESSION_ID}/recording.mp4`;

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
};
