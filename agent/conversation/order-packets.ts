// The backend's orders as packets reach the agent (ORDER_TOPIC, docs/api.md#sessions-direct).
// The sender is decided explicitly: a packet a participant of the room sent (a visitor forging
// the backend's order) is refused. One with no sender is the server's, or a participant's the
// room does not list (one joining, or just gone: rtc-node gives both no sender), so it is
// taken only with the session's proof (orderProof, which only the control plane can make).
import type { RemoteParticipant } from '@livekit/rtc-node';
import { Value } from '@sinclair/typebox/value';
import { orderKeyOf, provesOrder, SessionOrder } from '../../src/contract/index.ts';

export type PacketVerdict = { order: SessionOrder } | { refused: string; from?: string };

/** Reads order packets for the session whose job holds `reportToken` (its dispatch's). */
export function orderPacketReader(reportToken: string) {
  const key = orderKeyOf(reportToken);
  return (payload: Uint8Array, participant: RemoteParticipant | undefined): PacketVerdict => {
    if (participant) return { refused: 'an order sent by a participant', from: participant.identity };
    let order: unknown;
    try {
      order = JSON.parse(new TextDecoder().decode(payload));
    } catch {}
    if (!Value.Check(SessionOrder, order)) return { refused: 'an order that is not one, or has no proof' };
    if (!provesOrder(key, order))
      return { refused: "an order without the session's proof (from a sender the room does not list)" };
    return { order };
  };
}
