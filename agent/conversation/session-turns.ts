// What the session's events become: the transcript's turns (with the documents a reply drew
// on), each turn's quality and metrics, the language the visitor is heard in, and the visitor's
// speaking state for the camera and the avatar.
import { voice } from '@livekit/agents';
import { currentSpeech } from '../agents-adapter/index.ts';
import type { AgentLogger } from '../logging.ts';
import type { CameraSampler } from './camera.ts';
import type { KnowledgeTurns } from './knowledge.ts';
import type { OrderTaker } from './orders.ts';
import { type TurnQuality, turnMetricsFields } from './quality.ts';
import type { SpokenLanguages } from './spoken-languages.ts';
import type { TranscriptLog } from './transcripts.ts';

/** The longest a visitor's spoken turn is taken to have lasted before its words were recognised. */
const MAX_TURN_SPEECH_MS = 30_000;

export interface SessionTurnsOptions {
  languages: SpokenLanguages;
  transcripts: TranscriptLog;
  quality: TurnQuality;
  knowledge: KnowledgeTurns | null;
  camera: CameraSampler | null;
  orders?: OrderTaker;
  onVisitorSpeaking?(speaking: boolean): void;
  logger: AgentLogger;
}

export function recordSessionTurns(session: voice.AgentSession, options: SessionTurnsOptions): void {
  const { languages, transcripts, quality, knowledge, camera, logger } = options;
  session.on(voice.AgentSessionEventTypes.UserInputTranscribed, (event) => {
    if (event.isFinal) languages.hear(event.language);
  });
  /** When the visitor began speaking since their last turn: that turn's start (captions span the speech). */
  let visitorSpeakingSince: number | undefined;
  session.on(voice.AgentSessionEventTypes.UserStateChanged, (event) => {
    if (event.newState === 'speaking') visitorSpeakingSince ??= event.createdAt;
    camera?.setSpeaking(event.newState === 'speaking');
    options.onVisitorSpeaking?.(event.newState === 'speaking');
  });
  const said = new WeakSet<voice.SpeechHandle>();
  session.on(voice.AgentSessionEventTypes.SpeechCreated, (event) => {
    if (event.source === 'say') said.add(event.speechHandle);
  });
  session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (event) => {
    const item = event.item;
    if (item.type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) return;
    // Words said as given (the greeting, a notice, a say order) were not generated from passages.
    const speech = currentSpeech(session);
    const generated = item.role === 'assistant' && !(speech && said.has(speech));
    const answered = generated ? knowledge?.forReply(session.history, item) : null;
    // A spoken turn's message is made once its words are recognised: it began when its speech did
    // (within reason: speech that gave no words leaves an older start behind).
    const startedAt =
      item.role === 'user'
        ? Math.min(
            item.createdAt,
            Math.max(visitorSpeakingSince ?? item.createdAt, item.createdAt - MAX_TURN_SPEECH_MS),
          )
        : item.createdAt;
    if (item.role === 'user') visitorSpeakingSince = undefined;
    transcripts.record({
      turn_id: item.id,
      role: item.role === 'user' ? 'user' : 'agent',
      // Replies are spoken piece by piece, and the pieces' joins may leave doubled spaces.
      text: (item.textContent ?? '').replace(/\s+/g, ' ').trim(),
      language: item.role === 'user' ? languages.visitorTurn() : languages.speaking,
      interrupted: item.interrupted,
      ordered_by: item.role === 'assistant' ? options.orders?.orderedBy(session) : undefined,
      started_at: new Date(startedAt).toISOString(),
      ended_at: new Date(event.createdAt).toISOString(),
      ...(answered?.documentIds.length ? { document_ids: answered.documentIds.slice(0, 20) } : {}),
    });
    if (item.role === 'user') quality.visitorTurn(item.metrics ?? {});
    else
      quality.agentTurn({
        id: item.id,
        interrupted: item.interrupted,
        metrics: item.metrics ?? {},
        retrievalMs: answered?.retrievalMs,
      });
  });
  // One line per stage of each turn: where a reply's latency went, for operators and bench/conversation.
  session.on(voice.AgentSessionEventTypes.MetricsCollected, ({ metrics }) => {
    const fields = turnMetricsFields(metrics);
    if (fields) logger.info(fields, 'turn metrics');
  });
  session.on(voice.AgentSessionEventTypes.Error, (event) => logger.warn({ err: event.error }, 'conversation error'));
}
