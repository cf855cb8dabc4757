// /v1/identities (docs/api.md#identities): create (create.ts), list, read, update and retrain
// (update.ts), delete.

import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import { deleteOwned, findOwned } from '../db/owned.ts';
import { errorResponses } from '../http/errors.ts';
import { listPage } from '../http/paging.ts';
import { releaseTraining } from '../pipelines/index.ts';
import { attachmentsOf, attachmentsOfOne } from './attachments.ts';
import {
  CreateIdentityForm,
  IdentityListItem,
  IdentityParams,
  IdentityResponse,
  IdentityStatusResponse,
  ListIdentitiesQuery,
  UpdateIdentityForm,
} from './contract.ts';
import { createIdentity } from './create.ts';
import type { IdentityDeps } from './deps.ts';
import { identityPrefix } from './onboarding.ts';
import { identityListItem, identityResponse, identityStatusResponse } from './presenter.ts';
import { identityVisible, listedIdentities } from './queries.ts';
import { identities } from './schema.ts';
import { updateIdentity } from './update.ts';

export {
  type AttachmentChange,
  type Attachments,
  attachmentsOfOne,
  checkAttachments,
  noAttachments,
} from './attachments.ts';
export { findIdentity, type IdentityRow, identityVisible } from './queries.ts';
export { CONTROL_OR_REPLACEMENT } from './validation.ts';

/** The identity routes behind one door: the public API (`/v1`) or the console's (`/console/api`). */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a route table: Elysia infers each route's types along one chain, so a feature's routes stay one expression
export function identityRoutes<const Prefix extends string>(deps: IdentityDeps, audience: Audience<Prefix>) {
  const { db, urlsFor } = deps;
  const present = async (row: Parameters<typeof identityResponse>[0], request: Request) =>
    identityResponse(row, urlsFor(request).links, await attachmentsOfOne(db, row.id));
  const ownIdentity = (accountId: string, identityId: string) =>
    findOwned(db, identities, accountId, identityId, 'Identity', identityVisible);

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
        const { links } = urlsFor(request);
        const attached = await attachmentsOf(
          db,
          rows.map((row) => row.id),
        );
        return rows.map((row) => identityListItem(row, links, attached.get(row.id)!));
      },
      {
        query: ListIdentitiesQuery,
        response: { 200: t.Array(IdentityListItem), ...errorResponses(401, 422) },
        detail: { operationId: 'listIdentities', summary: "List the caller's identities, newest first" },
      },
    )
    .post(
      '',
      async ({ caller, body, request }) => present(await createIdentity(deps, caller.accountId, body), request),
      {
        body: CreateIdentityForm,
        parse: 'multipart/form-data',
        response: {
          200: IdentityResponse,
          ...errorResponses(401, 402, 413, 415, 422, 429, 502),
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
      async ({ caller, params, request }) => present(await ownIdentity(caller.accountId, params.identity_id), request),
      {
        params: IdentityParams,
        response: { 200: IdentityResponse, ...errorResponses(401, 404) },
        detail: { operationId: 'getIdentity', summary: 'Read one identity' },
      },
    )
    .get(
      '/:identity_id/status',
      async ({ caller, params }) => identityStatusResponse(await ownIdentity(caller.accountId, params.identity_id)),
      {
        params: IdentityParams,
        response: { 200: IdentityStatusResponse, ...errorResponses(401, 404) },
        detail: { operationId: 'getIdentityStatus', summary: "An identity's training status" },
      },
    )
    .patch(
      '/:identity_id',
      async ({ caller, params, body, set, request }) => {
        const current = await ownIdentity(caller.accountId, params.identity_id);
        const { row, retraining } = await updateIdentity(deps, caller.accountId, current, body);
        // A retrain runs after the answer: poll the status.
        if (retraining) set.status = 202;
        return present(row, request);
      },
      {
        params: IdentityParams,
        body: UpdateIdentityForm,
        parse: 'multipart/form-data',
        response: {
          200: IdentityResponse,
          202: IdentityResponse,
          ...errorResponses(401, 404, 409, 413, 415, 422, 429),
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
        const current = await ownIdentity(caller.accountId, params.identity_id);
        // Files and cloned voices first: if the row's delete then fails, a retried DELETE finishes the job.
        await deps.store.deletePrefix(identityPrefix(current.id));
        await deps.voices.release(current.voice);
        await deps.voices.release(current.pendingRetrain?.voice);
        await releaseTraining(deps.pipelines.get(current.pipelineId), current.training);
        await deleteOwned(db, identities, caller.accountId, current.id, 'Identity');
        set.status = 204;
      },
      {
        params: IdentityParams,
        response: { 204: t.Void(), ...errorResponses(401, 404) },
        detail: { operationId: 'deleteIdentity', summary: 'Delete an identity and its stored face and voice' },
      },
    );
}
