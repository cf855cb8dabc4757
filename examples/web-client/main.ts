// A minimal Likeness client: join the session room from the query string
// (?url=<rtc_url>&token=<token>[&visual_awareness=true]), talk with the microphone, watch and
// hear only the avatar, and read the live transcript; a recorded session shows a "Recording"
// mark over the video. Your server starts the session with POST /v1/sessions/start (the API
// key never reaches the browser) and hands these values over.
import { ConnectionState, type RemoteTrack, Room, RoomEvent, Track } from 'livekit-client';
// The names a session's room carries (track names, data topics): Likeness's own, bundled in.
import * as wire from '../../src/contract/wire-names.ts';
import './main.css';

const params = new URLSearchParams(location.search);
const url = params.get('url');
const token = params.get('token');

const video = document.getElementById('avatar-video') as HTMLVideoElement;
const audio = document.getElementById('avatar-audio') as HTMLAudioElement;
const state = document.getElementById('connection-state')!;
const notice = document.getElementById('notice')!;
const transcript = document.getElementById('transcript')!;
const agentState = document.getElementById('agent-state')!;
const recordingMark = document.getElementById('recording-mark')!;
const enableAudio = document.getElementById('enable-audio') as HTMLButtonElement;
const leave = document.getElementById('end-session') as HTMLButtonElement;

const NOTICES: Record<string, string> = {
  insufficient_credits: 'The credits ran out, so the session has ended.',
  agent_unavailable: 'The agent could not join, so the session has ended. Please try again.',
  service_restarting: 'The service is restarting, so the session has ended. Please start a new one in a moment.',
  idle: 'You were quiet for a while, so the session has ended.',
};

const room = new Room();

// Attach only the avatar: its video `avatar` and its voice `avatar_audio`. A session without
// an avatar publishes `agent_voice` instead. Any other audio (the agent's raw voice) must
// stay unplayed, or the visitor hears it twice.
let playing: { track: RemoteTrack; name: string } | null = null;
room.on(RoomEvent.TrackSubscribed, (track, publication) => {
  const name = publication.trackName;
  if (track.kind === Track.Kind.Video && name === wire.AVATAR_VIDEO_TRACK) track.attach(video);
  if (track.kind !== Track.Kind.Audio) return;
  if (name === wire.AVATAR_AUDIO_TRACK || (name === wire.VOICE_TRACK && playing?.name !== wire.AVATAR_AUDIO_TRACK)) {
    playing?.track.detach(audio);
    track.attach(audio);
    playing = { track, name };
  }
});
room.on(RoomEvent.TrackUnsubscribed, (track) => {
  track.detach();
  if (playing?.track === track) playing = null;
});

room.on(RoomEvent.ConnectionStateChanged, showState);
room.on(RoomEvent.Disconnected, () => {
  showState(ConnectionState.Disconnected);
  recordingMark.hidden = true;
  leave.disabled = true;
});

// Browsers may refuse to play sound before the visitor interacts with the page.
room.on(RoomEvent.AudioPlaybackStatusChanged, () => (enableAudio.hidden = room.canPlaybackAudio));
enableAudio.addEventListener('click', () => void room.startAudio());

// A recorded session's room says so in its metadata from its creation: tell the visitor,
// as long as they are in it.
function showRecording(): void {
  let metadata: Record<string, unknown> = {};
  try {
    metadata = JSON.parse(room.metadata || '{}') ?? {};
  } catch {
    // not the service's metadata: nothing recorded that we know of
  }
  recordingMark.hidden = metadata[wire.RECORDING_METADATA_KEY] !== true;
}
room.on(RoomEvent.RoomMetadataChanged, showRecording);

// Service notices arrive as reliable data on the `likeness.notice` topic.
// The agent's state, as LiveKit's agents publish it: listening, thinking or speaking.
room.on(RoomEvent.ParticipantAttributesChanged, (changed, participant) => {
  const value = changed[wire.AGENT_STATE_ATTRIBUTE];
  if (!value || !participant.isAgent) return;
  agentState.hidden = false;
  agentState.dataset.state = value;
  agentState.textContent = `Avatar: ${value}`;
});

room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
  if (topic !== wire.NOTICE_TOPIC) return;
  const { type } = JSON.parse(new TextDecoder().decode(payload)) as { type: string };
  notice.textContent = NOTICES[type] ?? `Notice: ${type}`;
  notice.dataset.type = type;
});

// Transcripts: the agent streams text on `lk.transcription`. The visitor's own words carry
// the visitor's microphone track in `lk.transcribed_track_id`; each stream holds a segment's
// text so far, and streams with the same `lk.segment_id` update one line.
const lines = new Map<string, HTMLLIElement>();
room.registerTextStreamHandler(wire.TRANSCRIPTION_TOPIC, (reader, sender) => void showTranscription(reader, sender));

/** livekit-client's text stream reader (its index does not export the class). */
type TextStreamReader = Parameters<Parameters<Room['registerTextStreamHandler']>[1]>[0];

async function showTranscription(reader: TextStreamReader, sender: { identity: string }): Promise<void> {
  const attributes = reader.info.attributes ?? {};
  const id = attributes[wire.TRANSCRIPTION_SEGMENT_ID] ?? reader.info.id;
  const fromVisitor =
    sender.identity === room.localParticipant.identity ||
    room.localParticipant.trackPublications.has(attributes[wire.TRANSCRIBED_TRACK_ID] ?? '');
  let line = lines.get(id);
  if (!line) {
    line = document.createElement('li');
    line.append(
      Object.assign(document.createElement('span'), {
        className: 'speaker',
        textContent: fromVisitor ? 'You: ' : 'Avatar: ',
      }),
      document.createElement('span'),
    );
    lines.set(id, line);
    transcript.append(line);
  }
  line.classList.toggle('interim', fromVisitor && attributes[wire.TRANSCRIPTION_FINAL] !== 'true');
  let text = '';
  try {
    for await (const chunk of reader) {
      text += chunk;
      line.lastElementChild!.textContent = text;
    }
  } catch {
    // Leaving the room cuts a stream mid-line: the line keeps what arrived.
  }
}

// The camera toggle exists only when the session was started with visual awareness.
if (params.get('visual_awareness') === 'true') {
  const camera = Object.assign(document.createElement('button'), {
    type: 'button',
    id: 'camera-toggle',
    textContent: 'Turn camera on',
  });
  camera.setAttribute('aria-pressed', 'false');
  camera.addEventListener('click', async () => {
    const on = !room.localParticipant.isCameraEnabled;
    await room.localParticipant
      .setCameraEnabled(on)
      .catch((error: Error) => (notice.textContent = `Camera: ${error.message}`));
    camera.setAttribute('aria-pressed', String(room.localParticipant.isCameraEnabled));
    camera.textContent = room.localParticipant.isCameraEnabled ? 'Turn camera off' : 'Turn camera on';
  });
  leave.before(camera);
}

// Leaving the room ends the session (the service records "client_left").
leave.addEventListener('click', () => void room.disconnect());

const STATE_NAMES: Record<ConnectionState, string> = {
  [ConnectionState.Connecting]: 'Connecting…',
  [ConnectionState.Connected]: 'Connected',
  [ConnectionState.Reconnecting]: 'Reconnecting…',
  [ConnectionState.SignalReconnecting]: 'Reconnecting…',
  [ConnectionState.Disconnected]: 'Disconnected',
};

function showState(value: ConnectionState): void {
  state.dataset.state = value;
  state.textContent = STATE_NAMES[value];
}

async function join(): Promise<void> {
  if (!url || !token) {
    notice.textContent = 'Open this page with ?url=<rtc_url>&token=<token> from a session start response.';
    leave.disabled = true;
    return;
  }
  try {
    await room.connect(url, token);
  } catch (error) {
    notice.textContent = `Could not join: ${error instanceof Error ? error.message : String(error)}`;
    return;
  }
  showRecording();
  enableAudio.hidden = room.canPlaybackAudio;
  // Without a microphone the visitor can still watch and listen.
  await room.localParticipant
    .setMicrophoneEnabled(true)
    .catch((error: Error) => (notice.textContent = `Microphone: ${error.message}`));
}

void join();
