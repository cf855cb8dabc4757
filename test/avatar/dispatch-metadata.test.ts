// What the control plane tells the agent job about the avatar (the dispatch metadata, read
// back from the real LiveKit server): the identity's pipeline and its trained assets as URLs
// the job can fetch, and the frame shape decided from form_factor and AVATAR_LANDSCAPE.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ParsedDispatch, parseDispatchMetadata } from '../../src/contract/index.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { createAstronaut, startPortraitOnly, startSession, storedTraining } from './support.ts';

let service: TestService;
let account: TestAccount;
/** A second control plane on the same LiveKit server, with landscape video switched off. */
let portraitOnly: TestService;
let portraitOnlyAccount: TestAccount;

beforeAll(async () => {
  service = await startTestService('pglite', { livekit: 'local', env: { CREDITS_ONBOARDING: '0' } });
  account = await service.account({ credits: 10_000 });
  ({ service: portraitOnly, account: portraitOnlyAccount } = await startPortraitOnly(service));
});
afterAll(async () => {
  await portraitOnly?.stop();
  await service?.stop();
});

/** The metadata the session's dispatch carries, parsed as the job parses it. */
async function dispatched(on: TestService, roomName: string): Promise<ParsedDispatch> {
  const dispatches = await on.services.livekit.dispatches.listDispatch(roomName);
  const dispatch = dispatches.find((d) => d.agentName === on.config.livekit.agentName);
  const parsed = parseDispatchMetadata(dispatch!.metadata);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.metadata;
}

async function shapeFor(on: TestService, who: TestAccount, identityId: string, formFactor?: string) {
  const session = await startSession(who, {
    identity_id: identityId,
    ...(formFactor ? { form_factor: formFactor } : {}),
  });
  const metadata = await dispatched(on, session.room_name);
  await who.call('POST', `/v1/sessions/${session.room_name}/end`);
  return metadata.avatar_shape;
}

describe('the dispatch metadata of an avatar session', () => {
  test('carries the pipeline id and every trained asset as a fetchable URL', async () => {
    const identity = await createAstronaut(account);
    const training = await storedTraining(service, identity.identity_id);
    const session = await startSession(account, { identity_id: identity.identity_id, form_factor: 'phone' });
    try {
      const metadata = await dispatched(service, session.room_name);
      expect(metadata.identity!.pipeline_id).toBe('builtin');
      const assets = metadata.identity!.assets!;
      // Exactly what training listed, by the same names.
      expect(Object.keys(assets).sort()).toEqual(Object.keys(training.assets!).sort());
      // The job fetches its face from the control plane's internal address (as it reports there):
      // PUBLIC_URL may be the service's own self-signed HTTPS, which the job does not trust.
      for (const shape of ['portrait', 'landscape']) {
        for (const name of [`${shape}.image`, `${shape}.rig`, `${shape}.texture.mouth`])
          expect(assets[name]).toStartWith(`${service.config.internalUrl}/assets/`);
      }
      // The photo's link is for clients and avatar services: the public address.
      expect(metadata.identity!.image_url).toStartWith(`${service.config.assetsUrl}/`);
      expect(service.config.assetsUrl).not.toStartWith(service.config.internalUrl);
      for (const [name, url] of Object.entries(assets)) {
        const response = await fetch(url);
        expect(`${name}: ${response.status}`).toBe(`${name}: 200`);
        if (name === 'portrait.rig') expect(await response.json()).toMatchObject({ width: 540, height: 960 });
        else await response.arrayBuffer();
      }
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
    }
  });

  test('shape: phone and no form factor → portrait, desktop → landscape', async () => {
    const identity = await createAstronaut(account);
    expect(await shapeFor(service, account, identity.identity_id, 'phone')).toBe('portrait');
    expect(await shapeFor(service, account, identity.identity_id)).toBe('portrait');
    expect(await shapeFor(service, account, identity.identity_id, 'desktop')).toBe('landscape');
  });

  test('shape with AVATAR_LANDSCAPE=false: portrait for desktops too', async () => {
    const identity = await createAstronaut(portraitOnlyAccount);
    expect(await shapeFor(portraitOnly, portraitOnlyAccount, identity.identity_id, 'desktop')).toBe('portrait');
    expect(await shapeFor(portraitOnly, portraitOnlyAccount, identity.identity_id, 'phone')).toBe('portrait');
  });
});
