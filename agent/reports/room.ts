// Feeds a LiveKit room's participant events to a meter.
import { ConnectionState, type RemoteParticipant, type Room, RoomEvent } from '@livekit/rtc-node';
import type { StreamingMeter } from './meter.ts';

/**
 * Tells `meter` about everyone already in the connected `room` and everyone who joins or
 * leaves from now on. Returns a function that stops listening.
 */
export function meterRoomParticipants(room: Room, meter: StreamingMeter): () => void {
  const joined = (participant: RemoteParticipant) => meter.participantConnected(participant.identity);
  // A participant dropped while the job itself is not connected (reconnecting to a restarted
  // server) was lost from sight, not seen leaving.
  const left = (participant: RemoteParticipant) =>
    room.connectionState === ConnectionState.CONN_CONNECTED
      ? meter.participantDisconnected(participant.identity)
      : meter.participantLost(participant.identity);
  room.on(RoomEvent.ParticipantConnected, joined);
  room.on(RoomEvent.ParticipantDisconnected, left);
  for (const participant of room.remoteParticipants.values()) joined(participant);
  return () => {
    room.off(RoomEvent.ParticipantConnected, joined);
    room.off(RoomEvent.ParticipantDisconnected, left);
  };
}
