// The dispatch metadata the control plane gives each job (a JSON string on the job):
// which session it serves, where to report, and what to render.
import { z } from 'zod';

const httpUrl = z.url({ protocol: /^https?$/ });

const jobIdentitySchema = z.object({
  identity_id: z.string().min(1),
  name: z.string(),
  prompt: z.string(),
  language: z.string().min(1),
  /** Names the renderer (agent/renderers); absent from a control plane before pipelines: the built-in one. */
  pipeline_id: z.string().min(1).optional(),
  /** The face to render (the identity's render variant). */
  image_url: httpUrl,
  audio_url: httpUrl.nullable(),
  /**
   * What the identity's training stored for its renderer, by name (e.g. `portrait.image`,
   * `portrait.rig`, `portrait.texture.mouth`, the same for `landscape`) → URL. Absent or empty
   * for identities trained before the talking head: they get the stand-in.
   */
  assets: z.record(z.string(), httpUrl).optional(),
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
  /**
   * The avatar video's shape, decided by the control plane (form factor and whether landscape
   * is enabled). Absent from an older control plane: landscape for desktops.
   */
  avatar_shape: z.enum(['portrait', 'landscape']).optional(),
});

export type JobMetadata = z.infer<typeof jobMetadataSchema>;
export type JobIdentity = z.infer<typeof jobIdentitySchema>;
export type JobVoice = z.infer<typeof jobVoiceSchema>;

/** The shape to render: the control plane's choice, or (older dispatches) the form factor's. */
export function avatarShapeOf(metadata: Pick<JobMetadata, 'avatar_shape' | 'form_factor'>): 'portrait' | 'landscape' {
  return metadata.avatar_shape ?? (metadata.form_factor === 'desktop' ? 'landscape' : 'portrait');
}

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
