// A visitor as a real WebRTC client (@livekit/rtc-node) joining with a session's
// rtc_url and token, recording what it sees.
import {
  ParticipantKind,
  type RemoteParticipant,
  type RemoteTrack,
  Room,
  RoomEvent,
  TrackKind,
} from '@livekit/rtc-node';

/** The topic of untilDataReaches's probes, kept out of `notices`. */
const PROBE_TOPIC = 'test.probe';

export interface StartedSession {
  room_name: string;
  token: string;
  rtc_url: string;
}

export interface Visitor {
  room: Room;
  notices: { topic?: string; payload: unknown }[];
  /** How many of untilDataReaches's probes arrived (they are not notices). */
  probesReceived(): number;
  tracks: RemoteTrack[];
  disconnected: Promise<string>;
  agent(): RemoteParticipant | undefined;
  leave(): Promise<void>;
}

/**
 * `onTrack`: called as each track is subscribed.
 * `audioOnly`: subscribe to audio tracks only. A benchmark's visitor runs on the server's own
 * machine, and decoding the avatar's video there would take CPU a real (remote) visitor does not.
 */
export async function joinAsVisitor(
  session: StartedSession,
  { audioOnly = false, onTrack }: { audioOnly?: boolean; onTrack?: (track: RemoteTrack) => void } = {},
): Promise<Visitor> {
  const room = new Room();
  const notices: Visitor['notices'] = [];
  const tracks: RemoteTrack[] = [];
  let probes = 0;
  room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
    if (topic === PROBE_TOPIC) {
      probes++;
      return;
    }
    const text = new TextDecoder().decode(payload);
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    notices.push({ topic, payload: parsed });
  });
  room.on(RoomEvent.TrackSubscribed, (track) => {
    tracks.push(track);
    // At once, not at the next poll: a video stream opened late misses the first frames.
    onTrack?.(track);
  });
  const disconnected = new Promise<string>((resolve) =>
    room.once(RoomEvent.Disconnected, (reason) => resolve(String(reason))),
  );
  if (audioOnly) {
    room.on(RoomEvent.TrackPublished, (publication) => {
      if (publication.kind === TrackKind.KIND_AUDIO) publication.setSubscribed(true);
    });
  }
  await connectWithin(room, session, { autoSubscribe: !audioOnly, dynacast: false });
  if (audioOnly) {
    // Tracks published before we joined.
    for (const participant of room.remoteParticipants.values()) {
      for (const publication of participant.trackPublications.values()) {
        if (publication.kind === TrackKind.KIND_AUDIO) publication.setSubscribed(true);
      }
    }
  }
  return {
    room,
    notices,
    probesReceived: () => probes,
    tracks,
    disconnected,
    agent: () => [...room.remoteParticipants.values()].find((p) => p.kind === ParticipantKind.AGENT),
    leave: () => room.disconnect(),
  };
}

/**
 * How long a visitor's connect may take. rtc-node's own has no deadline: a signal connection
 * that hung held the cluster suite's first test to its 180 s timeout and said nothing (run 106).
 */
const CONNECT_DEADLINE_MS = 30_000;

async function connectWithin(room: Room, session: StartedSession, options: Parameters<Room['connect']>[2]) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void room.disconnect().catch(() => undefined);
      reject(
        new Error(
          `the visitor's connect to ${session.rtc_url} (room ${session.room_name}) took over ${CONNECT_DEADLINE_MS} ms`,
        ),
      );
    }, CONNECT_DEADLINE_MS);
  });
  try {
    await Promise.race([room.connect(session.rtc_url, session.token, options), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Until a data message the server sends to the room reaches this visitor. LiveKit drops
 * server-sent data to a participant whose data channels are not open yet, which may be a while
 * after `connect` returns on a busy machine: a test that makes the service notify the room at
 * once (a real visitor is told after seconds in it) waits for this first.
 */
export async function untilDataReaches(
  visitor: Visitor,
  rooms: { sendData(room: string, data: Uint8Array, kind: number, options: { topic: string }): Promise<void> },
  roomName: string,
  timeoutMs = 10_000,
): Promise<void> {
  const reached = () => visitor.probesReceived() > 0;
  await eventually(
    async () => {
      if (!reached()) await rooms.sendData(roomName, new TextEncoder().encode('probe'), 0, { topic: PROBE_TOPIC });
      await Bun.sleep(100);
      return reached();
    },
    timeoutMs,
    'a data message from the server to reach the visitor',
  );
}

/**
 * Poll until `check` returns a value (or true), or fail after `timeoutMs`; `explain` adds what
 * was seen to the error (a full run's log keeps little else of a failure).
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
  explain?: () => unknown,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      const seen = explain ? `; seen: ${JSON.stringify(await explain())}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${seen}`);
    }
    await Bun.sleep(50);
  }
}

/**
 * The session as `GET /v1/sessions/{id}` reads it once ended. Its room closes before the end is
 * written (src/sessions/lifecycle.ts), so a visitor may hear of the end before the API says it.
 */
export function sessionEnded<Body extends { status?: unknown } = Record<string, unknown>>(
  account: { call(method: string, path: string): Promise<Response> },
  sessionId: string,
  timeoutMs = 10_000,
): Promise<Body> {
  return eventually(
    async () => {
      const read = (await (await account.call('GET', `/v1/sessions/${sessionId}`)).json()) as Body;
      return read.status === 'ended' ? read : undefined;
    },
    timeoutMs,
    `session ${sessionId} to read ended`,
  );
}
