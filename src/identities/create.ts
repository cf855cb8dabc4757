// POST /v1/identities (docs/api.md#identities): the create flow. Its steps: the form's rules
// and the pipeline's (422 before anything else), the provider's avatar id, the account's
// training slot and credits (429, 402), then the uploads inspected while the pipeline looks at
// the photo, and the training within the call (onboarding.ts: nothing kept or charged on a
// failure).

import { outcomeSchemaFormField } from '../outcomes/index.ts';
import { presetVoice, voiceChoiceProblems } from '../voices/index.ts';
import { attachmentProblems, parseIdLists } from './attachments.ts';
import type { CreateIdentityForm } from './contract.ts';
import type { IdentityDeps } from './deps.ts';
import { type IdentityFields, onboardIdentity, reserveIdentity } from './onboarding.ts';
import type { IdentityRow } from './queries.ts';
import { inspectUploads } from './uploads.ts';
import { asApiError, providerAvatarProblems, textProblems, throwIfProblems, unknownPipeline } from './validation.ts';

export type CreateIdentityBody = typeof CreateIdentityForm.static;

/** A new identity, trained; or the ApiError that refused it, with nothing kept or charged. */
export async function createIdentity(
  deps: IdentityDeps,
  accountId: string,
  body: CreateIdentityBody,
): Promise<IdentityRow> {
  const fields = await identityFields(deps, accountId, body);
  // The account's training slot and credits before any decoding (429, 402).
  const reservation = await reserveIdentity(deps, fields);
  // Training runs within this call and refuses a photo it cannot use itself (422, nothing kept).
  return onboardIdentity(deps, reservation, fields, async () => {
    // The pipeline starts on the photo (face detection) while ffmpeg decodes the voice sample;
    // training awaits that same check and reports its error, after any upload's own.
    const uploads = await inspectUploads(
      deps.uploadBounds,
      body.image,
      body.audio,
      (image) => void fields.pipeline.checkImage?.(image).catch(() => {}),
    );
    return { image: uploads.image!.inspected, audio: uploads.audio };
  }).catch((error: unknown) => {
    throw asApiError(error);
  });
}

/** The form checked (every problem at once, 422) and read into the identity's fields. */
async function identityFields(
  deps: IdentityDeps,
  accountId: string,
  body: CreateIdentityBody,
): Promise<IdentityFields> {
  const lists = parseIdLists(body);
  const outcome = outcomeSchemaFormField(body.outcome_schema);
  const pipelineId = body.pipeline_id ?? deps.pipelines.defaultId;
  const pipeline = deps.pipelines.get(pipelineId);
  throwIfProblems([
    ...textProblems(body),
    ...outcome.problems,
    ...(pipeline ? [] : [unknownPipeline(pipelineId, deps.pipelines.ids())]),
    ...voiceChoiceProblems(body),
    ...providerAvatarProblems(pipeline, body.provider_avatar_id),
    ...lists.problems,
    ...(await attachmentProblems(deps.db, accountId, lists.change)),
  ]);
  // The provider is asked before the uploads are decoded: a wrong id costs a lookup, not a training.
  if (body.provider_avatar_id !== undefined) await pipeline!.providerAvatars!.check(body.provider_avatar_id);
  return {
    accountId,
    name: body.name,
    prompt: body.prompt,
    language: body.language ?? 'auto',
    recordSessions: body.record_sessions,
    outcomeSchema: outcome.value,
    pipeline: pipeline!,
    presetVoice: body.voice_id === undefined ? undefined : presetVoice(body.voice_id),
    providerAvatarId: body.provider_avatar_id,
    attachments: lists.change,
  };
}
