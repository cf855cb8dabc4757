// In-room notices (docs/api.md#notices): reliable data messages on NOTICE_TOPIC that tell the
// visitor's client why the session is about to end.

export const NOTICE_TYPES = ['insufficient_credits', 'agent_unavailable', 'service_restarting', 'idle'] as const;
export type NoticeType = (typeof NOTICE_TYPES)[number];

export interface Notice {
  type: NoticeType;
  session_id: string;
}
