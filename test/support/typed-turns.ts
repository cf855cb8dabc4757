// A visitor's typed turns (the `lk.chat` topic) and the session's transcript, as the suites that
// converse by text use them. A typed turn is in the conversation's history (and so in what its
// summary and outcome are written from) only once the agent schedules its answer: a turn the model
// has been asked about but whose answer was not yet scheduled when the visitor left is lost, as
// a spoken turn cut short would be. So the suites wait for the transcript, not only the model.
import { CHAT_TOPIC } from '../../src/contract/index.ts';
import type { TestAccount } from './service.ts';
import { eventually, type Visitor } from './visitor.ts';

export interface TranscriptTurn {
  role: string;
  text: string;
}

/** `GET /v1/sessions/{id}/transcript`'s turns. */
export async function transcriptOf(account: Pick<TestAccount, 'call'>, sessionId: string): Promise<TranscriptTurn[]> {
  const answer = await account.call('GET', `/v1/sessions/${sessionId}/transcript`);
  return ((await answer.json()) as { turns: TranscriptTurn[] }).turns;
}

/**
 * Types `text` until `taken` says the conversation took it. The conversation reads chat only once
 * it has started, and takes one message per 2 s (agent/conversation/chat.ts), so it is typed
 * again every 2.1 s until then.
 */
export async function typeTurn(
  visitor: Visitor,
  text: string,
  taken: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(
    async () => {
      await visitor.room.localParticipant!.sendText(text, { topic: CHAT_TOPIC });
      await Bun.sleep(2_100);
      return taken();
    },
    timeoutMs,
    `the typed turn "${text.slice(0, 40)}"`,
  );
}

/** Until the transcript holds `text` as the visitor's turn. */
export async function inTranscript(
  account: Pick<TestAccount, 'call'>,
  sessionId: string,
  text: string,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(
    async () => (await transcriptOf(account, sessionId)).some((turn) => turn.role === 'user' && turn.text === text),
    timeoutMs,
    `"${text.slice(0, 40)}" in the transcript`,
  );
}
