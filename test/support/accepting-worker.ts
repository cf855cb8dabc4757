// An agent worker, as LiveKit sees one, that accepts every job offered and never runs it: the
// worker whose job process is slow to come (a busy machine, a process still loading). It speaks
// LiveKit's worker protocol (protobuf over the `/agent` WebSocket) as agents' own worker does,
// sends no heartbeat to the control plane, and joins no room.
import { JobType, ServerMessage, WorkerMessage } from '@livekit/protocol';
import { AccessToken } from 'livekit-server-sdk';

export interface AcceptingWorker {
  /** LiveKit's id for it (from its registration). */
  id: string;
  close(): void;
}

export async function acceptingWorker(options: {
  url: string;
  apiKey: string;
  apiSecret: string;
  agentName: string;
}): Promise<AcceptingWorker> {
  const token = new AccessToken(options.apiKey, options.apiSecret);
  token.addGrant({ agent: true });
  const url = `${options.url.replace(/^http/, 'ws').replace(/\/+$/, '')}/agent`;
  // Bun's WebSocket takes headers as agents' `ws` does.
  const socket = new WebSocket(url, {
    headers: { authorization: `Bearer ${await token.toJwt()}` },
  } as unknown as string[]);
  socket.binaryType = 'arraybuffer';
  const send = (message: WorkerMessage) => socket.send(message.toBinary() as Uint8Array<ArrayBuffer>);
  const registered = new Promise<string>((resolve, reject) => {
    socket.onerror = () => reject(new Error('the accepting worker could not reach LiveKit'));
    socket.onmessage = (event) => {
      const message = ServerMessage.fromBinary(new Uint8Array(event.data as ArrayBuffer));
      if (message.message.case === 'register') resolve(message.message.value.workerId);
      if (message.message.case === 'availability' && message.message.value.job) {
        const job = message.message.value.job;
        send(
          new WorkerMessage({
            message: {
              case: 'availability',
              value: { jobId: job.id, available: true, participantIdentity: `agent-${job.id}` },
            },
          }),
        );
      }
    };
  });
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onclose = () => reject(new Error('LiveKit closed the accepting worker'));
  });
  send(
    new WorkerMessage({
      message: { case: 'register', value: { type: JobType.JT_ROOM, agentName: options.agentName, version: '1.9.0' } },
    }),
  );
  const id = await registered;
  return { id, close: () => socket.close() };
}
