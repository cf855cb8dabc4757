// Session rows as response bodies (docs/api.md#sessions-end, #sessions-read, #session-metrics).

import { isTestAccount } from '../accounts/index.ts';
import type { SessionRow } from './lifecycle.ts';
import { sessionMetrics } from './quality.ts';
import { durationSeconds, usageSeconds } from './usage-reports.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function endResponse(row: SessionRow) {
  return {
    session_id: row.id,
    status: 'ended' as const,
    identity_id: row.identityId,
    pipeline_id: row.pipelineId,
    mode: 'meeting_agent' as const,
    metadata: row.endReason
      ? {
          end_reason: row.endReason,
          billed_minutes: row.billedMinutes,
          credits_charged: row.creditsCharged,
          ...usageSeconds(row),
          duration_seconds: durationSeconds(row),
          ended_at: iso(row.endedAt)!,
          avatar_fallback: row.avatarFallback ?? null,
        }
      : null,
  };
}

export function sessionResponse(row: SessionRow) {
  return {
    session_id: row.id,
    status: row.status,
    identity_id: row.identityId,
    avatar_enabled: row.avatarEnabled,
    language: row.language,
    visual_awareness: row.visualAwareness,
    form_factor: row.formFactor,
    test: isTestAccount(row.accountId),
    publishable_key_id: row.publishableKeyId,
    end_reason: row.endReason,
    billed_minutes: row.billedMinutes,
    credits_charged: row.creditsCharged,
    ...usageSeconds(row),
    duration_seconds: durationSeconds(row),
    created_at: row.createdAt.toISOString(),
    joined_at: iso(row.joinedAt),
    streaming_started_at: iso(row.streamingStartedAt),
    ended_at: iso(row.endedAt),
    avatar_fallback: row.avatarFallback ?? null,
    metrics: sessionMetrics(row),
    context: row.context,
    has_context: row.context !== null,
    greeting: row.greeting,
    client_control: row.clientControl,
    idle_timeout_seconds: row.idleTimeoutSeconds,
    record: row.record,
    recording_notice: row.recordingNotice,
    summary: row.summary,
    summary_status: row.summaryStatus,
    summary_detail: row.summaryDetail,
    outcome_schema: row.outcomeSchema ?? null,
    outcome: row.outcome ?? null,
    outcome_status: row.outcomeStatus,
    outcome_detail: row.outcomeDetail,
    visitor_id: row.visitorId,
    memory_scope: row.memoryScope,
    tool_ids: row.toolIds,
    document_ids: row.documentIds,
  };
}

/** A session in a list: the same shape, without the context's text (up to 8,000 characters a row) and the outcome's schema (16 KB). */
export function sessionListItem(row: SessionRow) {
  return { ...sessionResponse(row), context: null, outcome_schema: null };
}
