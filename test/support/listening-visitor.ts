// A visitor who hears the avatar (audio only, as the voice suites listen) and is in the room
// once the conversation has started: the agent joined and listening, its audio subscribed.
import { type RemoteTrack, TrackKind } from '@livekit/rtc-node';
import { AGENT_STATE_ATTRIBUTE } from '../../src/contract/index.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from './visitor.ts';
import { Listener } from './voice.ts';

export async function joinListening(session: StartedSession): Promise<{ visitor: Visitor; ears: () => Listener }> {
  let listener: Listener | undefined;
  const visitor = await joinAsVisitor(session, {
    audioOnly: true,
    onTrack: (track: RemoteTrack) => {
      if (track.kind === TrackKind.KIND_AUDIO) listener = new Listener(track);
    },
  });
  const agent = await eventually(() => visitor.agent(), 30_000, 'the agent');
  await eventually(
    () => agent.attributes[AGENT_STATE_ATTRIBUTE] === 'listening' && listener,
    30_000,
    'the conversation to start',
  );
  return { visitor, ears: () => listener! };
}
