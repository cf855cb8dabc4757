// /v1/identities (docs/api.md#identities): create, list, read, update, retrain, delete.

import { and, eq } from 'drizzle-orm';
import { t } from 'elysia';
import type { AssetStore } from '../assets/store.ts';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import type { Database } from '../db/index.ts';
import type { AddressesFor } from '../http/client-addresses.ts';
import { ApiError, ErrorResponse, invalid, notFound, ValidationErrorResponse } from '../http/errors.ts';
import { listPage } from '../http/paging.ts';
import { type AccountLimits, type AttemptLimiter, lockAccountLimits } from '../limits/index.ts';
import { type InspectedImage, inspectAudio, inspectImage, type MediaLimits } from '../media/index.ts';
import { outcomeSchemaFormField } from '../outcomes/index.ts';
import { type PipelineRegistry, releaseTraining } from '../pipelines/registry.ts';
import type { Pipeline } from '../pipelines/types.ts';
import { presetVoice, sampleProfile, type Voices, voiceChoiceProblems } from '../voices/index.ts';
import {
  attachmentProblems,
  attachmentsOf,
  attachmentsOfOne,
  parseIdLists,
  replaceAttachments,
} from './attachments.ts';
import {
  CreateIdentityForm,
  IdentityListItem,
  IdentityParams,
  IdentityResponse,
  IdentityStatusResponse,
  ListIdentitiesQuery,
  UpdateIdentityForm,
} from './contract.ts';
import { admitTraining } from './limits.ts';
import {
  type IdentityFields,
  identityPrefix,
  onboardIdentity,
  reserveIdentity,
  type UploadedAudio,
} from './onboarding.ts';
import { identityListItem, identityResponse, identityStatusResponse } from './presenter.ts';
import { deleteIdentity, findIdentity, type IdentityRow, listedIdentities } from './queries.ts';
import type { Retraining } from './retraining.ts';
import { identities } from './schema.ts';
import { asApiError, providerAvatarProblems, textProblems, throwIfProblems, unknownPipeline } from './validation.ts';

export interface IdentityDeps {
  db: Database;
  ledger: CreditLedger;
  store: AssetStore;
  pipelines: PipelineRegistry;
  retraining: Retraining;
  mediaLimits: MediaLimits;
  /** The addresses a client is given (signed asset links on the base it reached). */
  addressesFor: AddressesFor;
  onboardingCost: number;
  voices: Voices;
  /** The lease a create holds on its row while it runs (WORK_LEASE_SECONDS). */
  workLeaseSeconds: number;
  limits: AccountLimits;
  /** The hourly count of creates and retrains (identities/limits.ts). */
  trainings: AttemptLimiter;
}

const unauthorized = { 401: ErrorResponse };
const invalidRequest = { 422: ValidationErrorResponse };
const notFoundError = { 404: ErrorResponse };
const uploadErrors = { 413: ErrorResponse, 415: ErrorResponse };
const voiceProviderError = { 502: ErrorResponse };

/** `onImage`: called with the inspected photo before the audio is decoded, so work on it can overlap. */
async function inspectUploads(
  limits: MediaLimits,
  image?: File,
  audio?: File,
  onImage?: (image: InspectedImage) => void,
) {
  try {
    const imageBytes = image && new Uint8Array(await image.arrayBuffer());
    const audioBytes = audio && new Uint8Array(await audio.arrayBuffer());
    const inspectedImage = imageBytes && (await inspectImage(imageBytes, limits));
    if (inspectedImage) onImage?.(inspectedImage);
    const inspectedAudio = audioBytes && (await inspectAudio(audioBytes, limits));
    const uploadedAudio: UploadedAudio | undefined = audioBytes &&
      inspectedAudio && { bytes: audioBytes, inspected: inspectedAudio, profile: sampleProfile(inspectedAudio) };
    return {
      image: imageBytes && inspectedImage && { bytes: imageBytes, inspected: inspectedImage },
      audio: uploadedAudio,
    };
  } catch (error) {
    throw asApiError(error);
  }
}

/** The pipeline's own requirements on the photo (e.g. a face), before anything is stored or charged. */
async function checkImageFor(pipeline: Pipeline, image: InspectedImage): Promise<void> {
  try {
    await pipeline.checkImage?.(image);
  } catch (error) {
    throw asApiError(error);
  }
}

/** The identity routes behind one door: the public API (`/v1`) or the console's (`/console/api`). */
export function identityRoutes<const Prefix extends string>(deps: IdentityDeps, audience: Audience<Prefix>) {
  const { db, addressesFor } = deps;
  const present = async (row: Parameters<typeof identityResponse>[0], request: Request) =>
    identityResponse(row, addressesFor(request).links, await attachmentsOfOne(db, row.id));
  const findOwned = async (accountId: string, identityId: string) => {
    const row = await findIdentity(db, accountId, identityId);
    if (!row) throw notFound('Identity');
    return row;
  };

  /** After a preset replaced an identity's voice: its sample file and its clone at the provider go. */
  const dropReplacedVoice = async (previous: IdentityRow) => {
    if (previous.audio) await deps.store.delete(previous.audio.key);
    await deps.voices.release(previous.voice);
  };

  return authenticatedRoutes(db, audience, '/identities', 'Identities')
    .get(
      '',
      async ({ caller, query, set, request }) => {
        const { rows } = await listPage(
          db,
          identities,
          {
            scope: listedIdentities(caller.accountId),
            limit: query.limit,
            after: query.after,
            unknownAfter: 'after must be the identity_id of an identity in the list',
          },
          { set, path: `${audience.prefix}/identities` },
        );
        const { links } = addressesFor(request);
        const attached = await attachmentsOf(
          db,
          rows.map((row) => row.id),
        );
        return rows.map((row) => identityListItem(row, links, attached.get(row.id)!));
      },
      {
        query: ListIdentitiesQuery,
        response: { 200: t.Array(IdentityListItem), ...unauthorized, ...invalidRequest },
        detail: { operationId: 'listIdentities', summary: "List the caller's identities, newest first" },
      },
    )
    .post(
      '',
      async ({ caller, body, request }) => {
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
          ...(await attachmentProblems(db, caller.accountId, lists.change)),
        ]);
        // The provider is asked before the uploads are decoded: a wrong id costs a lookup, not a training.
        if (body.provider_avatar_id !== undefined) await pipeline!.providerAvatars!.check(body.provider_avatar_id);
        const fields: IdentityFields = {
          accountId: caller.accountId,
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
        // The account's training slot and credits before any decoding (429, 402).
        const reservation = await reserveIdentity(deps, fields);
        // Training runs within this call and refuses a photo it cannot use itself (422, nothing kept).
        const row = await onboardIdentity(deps, reservation, fields, async () => {
          // The pipeline starts on the photo (face detection) while ffmpeg decodes the voice sample;
          // training awaits that same check and reports its error, after any upload's own.
          const uploads = await inspectUploads(
            deps.mediaLimits,
            body.image,
            body.audio,
            (image) => void pipeline!.checkImage?.(image).catch(() => {}),
          );
          return { image: uploads.image!.inspected, audio: uploads.audio };
        }).catch((error: unknown) => {
          throw asApiError(error);
        });
        return present(row, request);
      },
      {
        body: CreateIdentityForm,
        parse: 'multipart/form-data',
        response: {
          200: IdentityResponse,
          402: ErrorResponse,
          429: ErrorResponse,
          ...uploadErrors,
          ...unauthorized,
          ...invalidRequest,
          ...voiceProviderError,
        },
        detail: {
          operationId: 'createIdentity',
          summary: 'Create an identity; training runs within the call',
          description:
            'Send `audio` to clone a voice, or `voice_id` for a preset (GET /v1/voices); neither gives the default English-only voice. `tool_ids` and `document_ids` (each one JSON array) name the tools and documents its agent uses. The photo must show a face large enough to animate: 422 `image.no_face` or `image.face_too_small` otherwise (several faces: the largest is used). 502 when the voice provider fails; nothing is kept or charged then.',
        },
      },
    )
    .get(
      '/:identity_id',
      async ({ caller, params, request }) => present(await findOwned(caller.accountId, params.identity_id), request),
      {
        params: IdentityParams,
        response: { 200: IdentityResponse, ...unauthorized, ...notFoundError },
        detail: { operationId: 'getIdentity', summary: 'Read one identity' },
      },
    )
    .get(
      '/:identity_id/status',
      async ({ caller, params }) => identityStatusResponse(await findOwned(caller.accountId, params.identity_id)),
      {
        params: IdentityParams,
        response: { 200: IdentityStatusResponse, ...unauthorized, ...notFoundError },
        detail: { operationId: 'getIdentityStatus', summary: "An identity's training status" },
      },
    )
    .patch(
      '/:identity_id',
      async ({ caller, params, body, set, request }) => {
        const current = await findOwned(caller.accountId, params.identity_id);
        for (const field of ['pipeline_id', 'provider_avatar_id'] as const) {
          if (body[field] !== undefined)
            throw invalid(
              ['body', field],
              `${field} cannot be changed; create a new identity instead`,
              'immutable_field',
            );
        }
        const retrain = body.image !== undefined || body.audio !== undefined;
        const voice = body.voice_id === undefined ? undefined : presetVoice(body.voice_id);
        // Each list sent replaces the identity's whole list ([] clears it); one not sent stays.
        const lists = parseIdLists(body);
        const attachments = lists.change;
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
          ...(await attachmentProblems(db, caller.accountId, attachments)),
        ]);
        if (retrain) {
          // A retrain is a training like a create: the account's limits before any decoding.
          await db.transaction(async (tx) =>
            admitTraining(
              tx,
              caller.accountId,
              await lockAccountLimits(tx, caller.accountId, deps.limits),
              deps.trainings,
            ),
          );
          const uploads = await inspectUploads(deps.mediaLimits, body.image, body.audio);
          // Training runs after the 202: a photo it cannot use is refused now, while the caller waits.
          const pipeline = deps.pipelines.get(current.pipelineId);
          if (pipeline && uploads.image) await checkImageFor(pipeline, uploads.image.inspected);
          const row = await deps.retraining.accept({
            accountId: caller.accountId,
            identityId: current.id,
            prompt: body.prompt!,
            name: body.name,
            language: body.language,
            recordSessions: body.record_sessions,
            outcomeSchema: outcome.value,
            image: uploads.image,
            audio: uploads.audio,
            voice,
            attachments,
          });
          if (voice !== undefined) await dropReplacedVoice(current);
          set.status = 202;
          return present(row, request);
        }
        // The fields and the lists change together, or not at all.
        const row = await db.transaction(async (tx) => {
          const [updated] = await tx
            .update(identities)
            .set({
              ...(body.name !== undefined && { name: body.name }),
              ...(body.prompt !== undefined && { prompt: body.prompt }),
              ...(body.language !== undefined && { language: body.language }),
              ...(body.record_sessions !== undefined && { recordSessions: body.record_sessions }),
              ...(outcome.value !== undefined && { outcomeSchema: outcome.value }),
              // A preset replaces a cloned voice, and its sample is no longer kept.
              ...(voice !== undefined && { voice, audio: null }),
              updatedAt: new Date(),
            })
            .where(
              and(
                eq(identities.id, current.id),
                eq(identities.accountId, caller.accountId),
                // A retrain in flight would install its own voice when it finishes.
                ...(voice !== undefined ? [eq(identities.status, 'ready')] : []),
              ),
            )
            .returning();
          if (updated) await replaceAttachments(tx, caller.accountId, current.id, attachments);
          return updated;
        });
        if (!row) {
          if (voice !== undefined && (await findIdentity(db, caller.accountId, current.id))) {
            throw new ApiError(409, 'This identity is retraining; change its voice when it is ready');
          }
          throw notFound('Identity');
        }
        if (voice !== undefined) await dropReplacedVoice(current);
        return present(row, request);
      },
      {
        params: IdentityParams,
        body: UpdateIdentityForm,
        parse: 'multipart/form-data',
        response: {
          200: IdentityResponse,
          202: IdentityResponse,
          409: ErrorResponse,
          429: ErrorResponse,
          ...uploadErrors,
          ...unauthorized,
          ...notFoundError,
          ...invalidRequest,
        },
        detail: {
          operationId: 'updateIdentity',
          summary: 'Update an identity',
          description:
            'Text fields, `voice_id`, `tool_ids` and `document_ids` alone answer 200 (each list sent replaces the whole list; `[]` clears it). Image or audio uploads (with `prompt`) start a retrain: 202, then poll the status; a new image without a usable face is refused at once (422, as on create). `voice_id` switches to a preset voice and drops the uploaded sample; new `audio` is cloned into a new voice by the retrain.',
        },
      },
    )
    .delete(
      '/:identity_id',
      async ({ caller, params, set }) => {
        const current = await findOwned(caller.accountId, params.identity_id);
        // Files and cloned voices first: if the row's delete then fails, a retried DELETE finishes the job.
        await deps.store.deletePrefix(identityPrefix(current.id));
        await deps.voices.release(current.voice);
        await deps.voices.release(current.pendingRetrain?.voice);
        await releaseTraining(deps.pipelines.get(current.pipelineId), current.training);
        if (!(await deleteIdentity(db, caller.accountId, current.id))) throw notFound('Identity');
        set.status = 204;
      },
      {
        params: IdentityParams,
        response: { 204: t.Void(), ...unauthorized, ...notFoundError },
        detail: { operationId: 'deleteIdentity', summary: 'Delete an identity and its stored face and voice' },
      },
    );
}
