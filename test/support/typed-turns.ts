// A visitor's typed turns (the `lk.chat` topic) and the session's transcript, as the suites that
// converse by text use them. A typed turn is in the conversation's history (and so in what its
// summary and outcome are written from) only once the agent schedules its answer: a turn the model
// has been asked about but whose answer was not yet scheduled when the visitor left is lost, as
// a spoken turn cut short would be. So the suites wait for the transcript, not only the model.
import type { LocalParticipant } from '@livekit/rtc-node';
import { CHAT_MIN_INTERVAL_MS } from '../../agent/conversation/chat.ts';
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
 * Between two messages of one visitor: the conversation drops one that arrives sooner than
 * CHAT_MIN_INTERVAL_MS after the last it took, and a message can take a few hundred ms longer to
 * arrive than the one after it on a loaded machine.
 */
const TYPED_GAP_MS = CHAT_MIN_INTERVAL_MS + 400;
/** When each participant last typed. */
const lastTyped = new WeakMap<LocalParticipant, number>();

/**
 * Types `text` until `taken` says the conversation took it, and returns when the message taken
 * was sent. The conversation reads chat only once it has started and takes one message per 2 s
 * (agent/conversation/chat.ts): each message goes 2.4 s after this participant's last, and
 * `taken` is asked meanwhile, so the caller goes on as soon as it holds.
 */
export async function typeUntilTaken(
  participant: LocalParticipant,
  text: string,
  taken: () => boolean | Promise<boolean>,
  what = `the typed turn "${text.slice(0, 40)}"`,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const sentAt = await typeOnce(participant, text);
    do {
      if (await taken()) return sentAt;
      await Bun.sleep(100);
    } while (performance.now() < sentAt + TYPED_GAP_MS);
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

/** One message, 2.4 s after this participant's last (whether the conversation takes it is the caller's to see). */
export async function typeOnce(participant: LocalParticipant, text: string): Promise<number> {
  const wait = (lastTyped.get(participant) ?? -Infinity) + TYPED_GAP_MS - performance.now();
  if (wait > 0) await Bun.sleep(wait);
  const sentAt = performance.now();
  lastTyped.set(participant, sentAt);
  await participant.sendText(text, { topic: CHAT_TOPIC });
  return sentAt;
}

/** typeUntilTaken for a visitor. */
export async function typeTurn(
  visitor: Visitor,
  text: string,
  taken: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  await typeUntilTaken(visitor.room.localParticipant!, text, taken, undefined, timeoutMs);
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
