// The dispatch metadata the control plane gives each job (a JSON string on the job):
// which session it serves, where to report, and what to render.
import { z } from 'zod';

const httpUrl = z.url({ protocol: /^https?$/ });

const jobIdentitySchema = z.object({
  identity_id: z.string().min(1),
  name: z.string(),
  prompt: z.string(),
  language: z.string().min(1),
  /** The face to render (the identity's render variant). */
  image_url: httpUrl,
  audio_url: httpUrl.nullable(),
});

const jobVoiceSchema = z.object({
  preset_id: z.string().nullable(),
  multilingual: z.boolean(),
  elevenlabs_voice_id: z.string().nullable(),
  profile: z.object({ pitch_hz: z.number().positive(), words_per_minute: z.number().positive() }),
});

export const jobMetadataSchema = z.object({
  session_id: z.string().startsWith('ses_'),
  report_url: httpUrl,
  report_token: z.string().min(1),
  avatar_enabled: z.boolean(),
  /** The LiveKit identity minted into the visitor's token: only this participant makes minutes billable. */
  visitor_identity: z.string().min(1),
  billing_interval_seconds: z.number().int().positive(),
  identity: jobIdentitySchema.nullable(),
  /** Null: the default English-only voice. */
  voice: jobVoiceSchema.nullable().default(null),
  language: z.enum(['auto', 'en', 'es', 'pl', 'uk']),
  visual_awareness: z.boolean(),
  form_factor: z.enum(['phone', 'desktop']).nullable(),
});

export type JobMetadata = z.infer<typeof jobMetadataSchema>;
export type JobIdentity = z.infer<typeof jobIdentitySchema>;
export type JobVoice = z.infer<typeof jobVoiceSchema>;

export type ParsedJobMetadata = { ok: true; metadata: JobMetadata } | { ok: false; problem: string };

/** Unknown fields are dropped, so the control plane may add some before the agent knows them. */
export function parseJobMetadata(raw: string): ParsedJobMetadata {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, problem: 'the job metadata is not JSON' };
  }
  const result = jobMetadataSchema.safeParse(json);
  if (result.success) return { ok: true, metadata: result.data };
  return { ok: false, problem: z.prettifyError(result.error) };
}
