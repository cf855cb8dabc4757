// The customer's side of a webhook tool: a server on loopback that checks each call's signature
// with the tool's secret (as the customer is told to), keeps the calls it accepted, answers a
// call with what the test scripts, and answers 401 to a call it cannot verify (kept, too: a
// suite asserts there were none).
import { Webhook } from 'standardwebhooks';

/** A webhook tool call as the receiver reads it (docs/api.md, "Webhook tools"). */
export interface ReceivedToolCall {
  session_id: string;
  tool: string;
  call_id: string;
  arguments: Record<string, unknown>;
}

export interface ToolReceiver {
  /** The URL to give the tool: `http://127.0.0.1:<port>/tools`. */
  readonly url: string;
  /** Verified calls, oldest first. */
  readonly calls: ReceivedToolCall[];
  /** Why each unverifiable call was refused. */
  readonly rejected: string[];
  /** The secret the service returned when the tool was created; calls are verified with it. */
  secret: string;
  stop(): void;
}

/** `answer` is the receiver's reply to a verified call: a body (sent as JSON unless a string) or a Response. */
export function toolReceiver(answer: (call: ReceivedToolCall) => unknown): ToolReceiver {
  const receiver: ToolReceiver = {
    url: '',
    calls: [],
    rejected: [],
    secret: '',
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const raw = await request.text();
      let call: ReceivedToolCall;
      try {
        call = new Webhook(receiver.secret).verify(raw, request.headers.toJSON()) as ReceivedToolCall;
      } catch (error) {
        receiver.rejected.push(String(error));
        return new Response('bad signature', { status: 401 });
      }
      receiver.calls.push(call);
      const reply = await answer(call);
      if (reply instanceof Response) return reply;
      return typeof reply === 'string' ? new Response(reply) : Response.json(reply);
    },
  });
  return Object.assign(receiver, { url: `http://127.0.0.1:${server.port}/tools` });
}
