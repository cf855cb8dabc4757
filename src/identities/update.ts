// PATCH /v1/identities/{identity_id} (docs/api.md#identities): the update flow. Its steps: the
// form's rules (422: fields that cannot change, an empty update, a retrain without its prompt,
// every other problem at once), then either a retrain (new uploads: the account's limits, the
// uploads inspected and the photo checked while the caller waits, the training after the 202:
// retraining.ts) or the fields and lists changed together in one transaction. A preset voice
// that replaced a cloned one drops its sample and its clone.
import { eq } from 'drizzle-orm';
import { isOwned } from '../db/owned.ts';
import { ApiError, invalid, notFound } from '../http/errors.ts';
import { sentFields } from '../http/sent-fields.ts';
import { lockAccountLimits } from '../limits/index.ts';
import { outcomeSchemaFormField } from '../outcomes/index.ts';
import { presetVoice, voiceChoiceProblems } from '../voices/index.ts';
import { attachmentProblems, parseIdLists, replaceAttachments } from './attachments.ts';
import type { UpdateIdentityForm } from './contract.ts';
import type { IdentityDeps } from './deps.ts';
import { findIdentity, type IdentityRow } from './queries.ts';
import { identities } from './schema.ts';
import { admitTraining } from './training-limits.ts';
import { checkImageFor, inspectUploads } from './uploads.ts';
import { textProblems, throwIfProblems } from './validation.ts';

export type UpdateIdentityBody = typeof UpdateIdentityForm.static;

/** The form read: what changes. */
interface IdentityChange {
  retrain: boolean;
  voice: ReturnType<typeof presetVoice> | undefined;
  outcomeSchema: Record<string, unknown> | null | undefined;
  attachments: ReturnType<typeof parseIdLists>['change'];
}

/** One update, as either of its ways (a retrain, or the fields changed) takes it. */
interface Update {
  deps: IdentityDeps;
  accountId: string;
  current: IdentityRow;
  body: UpdateIdentityBody;
  change: IdentityChange;
}

/** The identity as updated (`retraining`: a retrain was accepted and runs after the answer). */
export async function updateIdentity(
  deps: IdentityDeps,
  accountId: string,
  current: IdentityRow,
  body: UpdateIdentityBody,
): Promise<{ row: IdentityRow; retraining: boolean }> {
  const change = await checkedChange(deps, accountId, body);
  const update: Update = { deps, accountId, current, body, change };
  const row = change.retrain ? await retrain(update) : await changeFields(update);
  if (change.voice !== undefined) await dropReplacedVoice(deps, current);
  return { row, retraining: change.retrain };
}

/** The form's rules, every problem at once where they can be (422). */
async function checkedChange(deps: IdentityDeps, accountId: string, body: UpdateIdentityBody): Promise<IdentityChange> {
  for (const field of ['pipeline_id', 'provider_avatar_id'] as const) {
    if (body[field] !== undefined)
      throw invalid(['body', field], `${field} cannot be changed; create a new identity instead`, 'immutable_field');
  }
  const retrain = body.image !== undefined || body.audio !== undefined;
  // Each list sent replaces the identity's whole list ([] clears it); one not sent stays.
  const lists = parseIdLists(body);
  const outcome = outcomeSchemaFormField(body.outcome_schema);
  if (
    !retrain &&
    body.voice_id === undefined &&
    body.name === undefined &&
    body.prompt === undefined &&
    body.language === undefined &&
    body.record_sessions === undefined &&
    body.outcome_schema === undefined &&
    body.tool_ids === undefined &&
    body.document_ids === undefined
  ) {
    throw invalid(
      ['body'],
      'Nothing to update: send name, prompt, language, voice_id, record_sessions, outcome_schema, tool_ids, document_ids, image or audio',
      'empty_update',
    );
  }
  if (retrain && body.prompt === undefined) {
    throw invalid(['body', 'prompt'], 'prompt is required alongside image or audio uploads', 'missing');
  }
  throwIfProblems([
    ...textProblems(body),
    ...outcome.problems,
    ...voiceChoiceProblems(body),
    ...lists.problems,
    ...(await attachmentProblems(deps.db, accountId, lists.change)),
  ]);
  return {
    retrain,
    voice: body.voice_id === undefined ? undefined : presetVoice(body.voice_id),
    outcomeSchema: outcome.value,
    attachments: lists.change,
  };
}

/** New uploads: a training like a create's, accepted now and run after the answer. */
async function retrain({ deps, accountId, current, body, change }: Update): Promise<IdentityRow> {
  // A retrain is a training like a create: the account's limits before any decoding.
  await deps.db.transaction(async (tx) =>
    admitTraining(tx, accountId, await lockAccountLimits(tx, accountId, deps.limits), deps.trainings),
  );
  const uploads = await inspectUploads(deps.uploadBounds, body.image, body.audio);
  // Training runs after the 202: a photo it cannot use is refused now, while the caller waits.
  const pipeline = deps.pipelines.get(current.pipelineId);
  if (pipeline && uploads.image) await checkImageFor(pipeline, uploads.image.inspected);
  return deps.retraining.accept({
    accountId,
    identityId: current.id,
    prompt: body.prompt!,
    name: body.name,
    language: body.language,
    recordSessions: body.record_sessions,
    outcomeSchema: change.outcomeSchema,
    image: uploads.image,
    audio: uploads.audio,
    voice: change.voice,
    attachments: change.attachments,
  });
}

/** The fields and the lists change together, or not at all. */
async function changeFields({ deps, accountId, current, body, change }: Update): Promise<IdentityRow> {
  const { db } = deps;
  const { voice, outcomeSchema, attachments } = change;
  const row = await db.transaction(async (tx) => {
    const [updated] = await tx
      .update(identities)
      .set({
        ...sentFields(body, {
          name: 'name',
          prompt: 'prompt',
          language: 'language',
          record_sessions: 'recordSessions',
        }),
        ...(outcomeSchema !== undefined && { outcomeSchema }),
        // A preset replaces a cloned voice, and its sample is no longer kept.
        ...(voice !== undefined && { voice, audio: null }),
      })
      .where(
        // A retrain in flight would install its own voice when it finishes.
        isOwned(identities, accountId, current.id, voice !== undefined ? eq(identities.status, 'ready') : undefined),
      )
      .returning();
    if (updated) await replaceAttachments(tx, accountId, current.id, attachments);
    return updated;
  });
  if (!row) {
    if (voice !== undefined && (await findIdentity(db, accountId, current.id))) {
      throw new ApiError(409, 'This identity is retraining; change its voice when it is ready');
    }
    throw notFound('Identity');
  }
  return row;
}

/** After a preset replaced an identity's voice: its sample file and its clone at the provider go. */
async function dropReplacedVoice(deps: IdentityDeps, previous: IdentityRow): Promise<void> {
  if (previous.audio) await deps.store.delete(previous.audio.key);
  await deps.voices.release(previous.voice);
}
