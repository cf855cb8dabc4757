// LiveKit's webhooks end sessions when the visitor leaves: only signed ones are believed.
import { describe, expect, test } from 'bun:test';
import { AccessToken } from 'livekit-server-sdk';
import { suiteServiceWithAccount } from '../support/suite-service.ts';

describe('LiveKit webhooks', () => {
  const suite = suiteServiceWithAccount('pglite', { livekit: 'local' });

  const startSession = async () => {
    const response = await suite.account.call('POST', '/v1/sessions/start', {
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    const started = (await response.json()) as { room_name: string; token: string };
    const visitor = JSON.parse(Buffer.from(started.token.split('.')[1]!, 'base64url').toString()).sub as string;
    return { id: started.room_name, visitor };
  };
  const send = async (event: Record<string, unknown>, secret = suite.service.services.livekit.apiSecret) => {
    const body = JSON.stringify(event);
    const token = new AccessToken(suite.service.services.livekit.apiKey, secret);
    token.sha256 = new Bun.CryptoHasher('sha256').update(body).digest('base64');
    return suite.service.call('POST', '/internal/livekit/webhook', {
      body,
      headers: { 'content-type': 'application/webhook+json', authorization: await token.toJwt() },
    });
  };
  const read = async (id: string) =>
    (await (await suite.account.call('GET', `/v1/sessions/${id}`)).json()) as Record<string, unknown>;
  /** LiveKit's `event` (participant_joined or _left) for the participant `identity` in `room`. */
  const participantEvent = (event: string, room: string, identity: string) => ({
    event,
    room: { name: room },
    participant: { identity },
  });

  test('a signed participant_joined records the join; participant_left ends the session and closes the room', async () => {
    const session = await startSession();
    expect((await send(participantEvent('participant_joined', session.id, session.visitor))).status).toBe(200);
    expect((await read(session.id)).joined_at).not.toBeNull();
    expect((await send(participantEvent('participant_left', session.id, 'someone_else'))).status).toBe(200);
    expect((await read(session.id)).status).toBe('running');
    expect((await send(participantEvent('participant_left', session.id, session.visitor))).status).toBe(200);
    expect(await read(session.id)).toMatchObject({ status: 'ended', end_reason: 'client_left' });
    expect(await suite.service.services.livekit.rooms.listRooms([session.id])).toEqual([]);
  });

  test('room_finished ends a session nobody joined as no_join', async () => {
    const session = await startSession();
    expect((await send({ event: 'room_finished', room: { name: session.id } })).status).toBe(200);
    expect(await read(session.id)).toMatchObject({ status: 'ended', end_reason: 'no_join' });
  });

  test('an unsigned, wrongly signed or tampered webhook is refused and changes nothing', async () => {
    const session = await startSession();
    const event = participantEvent('participant_left', session.id, session.visitor);
    const unsigned = await suite.service.call('POST', '/internal/livekit/webhook', {
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/webhook+json' },
    });
    expect(unsigned.status).toBe(401);
    expect((await send(event, 'not-the-secret-not-the-secret-not-the-secret')).status).toBe(401);
    const token = new AccessToken(suite.service.services.livekit.apiKey, suite.service.services.livekit.apiSecret);
    token.sha256 = new Bun.CryptoHasher('sha256').update('{"event":"room_started"}').digest('base64');
    const tampered = await suite.service.call('POST', '/internal/livekit/webhook', {
      body: JSON.stringify(event),
      headers: { 'content-type': 'application/webhook+json', authorization: await token.toJwt() },
    });
    expect(tampered.status).toBe(401);
    expect((await read(session.id)).status).toBe('running');
  });
});
