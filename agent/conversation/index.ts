// The conversation: one AgentSession per job, listening to the visitor (voice-activity and
// end-of-turn detection, barge-in), thinking with the identity's prompt and speaking in the
// session's language, through the avatar when there is one. The client sends nothing but
// its microphone (and camera, with visual awareness).
import { inference, type JobContext, llm, type VAD, voice } from '@livekit/agents';
import type { RemoteParticipant, Room } from '@livekit/rtc-node';
import type { ProviderSettings, TurnDetection } from '../../src/config.ts';
import type {
  AgentEndedReport,
  ParsedDispatch,
  SpokenLanguage,
  TranscriptReport,
  TurnMetricsReport,
  VisitorIdleReport,
} from '../../src/contract/index.ts';
import { closeRemoteSessionHost, onToolOutput, syncCaptionsToPlayback } from '../agents-adapter/index.ts';
import type { AgentLogger } from '../logging.ts';
import { createProviders, type SessionProviders } from '../providers/index.ts';
import type { OfflineModels } from '../providers/offline/index.ts';
import type { Reporter } from '../reports/index.ts';
import { type Afterwards, afterwards } from './afterwards.ts';
import { CameraSampler, modelSeesCamera } from './camera.ts';
import { acceptChat } from './chat.ts';
import { conversationAgent } from './conversation-agent.ts';
import { sayFirstWords } from './first-words.ts';
import { watchIdleVisitor } from './idle.ts';
import type { OrderTaker } from './orders.ts';
import type { PreparedGreeting } from './prepared-greeting.ts';
import { TurnQuality, type VideoTally } from './quality.ts';
import { recordSessionTurns } from './session-turns.ts';
import { SpokenLanguages } from './spoken-languages.ts';
import { type SentenceReader, type TextTurnDetector, transcriptTurnDetector } from './transcript-turns.ts';
import { TranscriptLog } from './transcripts.ts';

/** The visitor's microphone as the conversation hears it. */
export const INPUT_SAMPLE_RATE = 16_000;

export interface ConversationOptions {
  ctx: JobContext<unknown>;
  metadata: ParsedDispatch;
  providers: ProviderSettings;
  /** The greeting voiced ahead while the job started (prepared-greeting.ts); null: synthesised when said. */
  greetingVoice?: Promise<PreparedGreeting | null>;
  /** Loaded in the job process's prewarm when some provider has no cloud key. */
  offline: OfflineModels | undefined;
  /** Reads whether the visitor's words end a sentence (`transcript` turn detection); loaded with the process. */
  sentenceReader: SentenceReader | undefined;
  /** Voice-activity detection, loaded with the process. */
  vad: VAD;
  /** Where the agent's speech goes: the avatar (ours, or an avatar service's stream), or the voice-only publisher. */
  speech: voice.AudioOutput;
  /** Settles once the visitor can hear `speech`: the greeting waits for it (at most GREETING_WAIT_MS). */
  audible: Promise<void>;
  /** Told when the visitor starts and stops speaking (the avatar nods at their pauses). */
  onVisitorSpeaking?(speaking: boolean): void;
  /** Where transcript turns and each agent turn's quality go (the session's report endpoint). */
  reporter: Reporter<TranscriptReport | TurnMetricsReport | VisitorIdleReport | AgentEndedReport>;
  /** The face's frames published while watched, and for how long (its delivered fps); absent when the job draws no face. */
  videoTally?: () => VideoTally;
  /** The backend's and the visitor's app's orders (orders.ts), carried out once the conversation has started. */
  orders?: OrderTaker;
  logger: AgentLogger;
}

/** A running conversation; once closed, what it leaves behind (afterwards.ts). */
export interface Conversation extends Afterwards {
  session: voice.AgentSession;
  close(): Promise<void>;
}

/** How long a reply's speech waits for its next sentence before it is taken for hung. */
const NEXT_SENTENCE_WAIT_MS = 45_000;

/** The end-of-turn detection agents runs for a `TurnSettings.detection` mode. */
function turnDetection(
  mode: TurnDetection,
  language: () => SpokenLanguage,
  reader: SentenceReader | undefined,
): inference.TurnDetector | TextTurnDetector | 'vad' {
  // Pinned: the local model runs in the worker's inference process, never the cloud one.
  if (mode === 'model') return new inference.TurnDetector({ version: 'v1-mini' });
  if (mode === 'transcript') return transcriptTurnDetector(language, reader);
  return 'vad';
}

/** The first words, not waited for, then the visitor's silence watched (idle.ts) and the replies' prompt read ahead. */
function greetAndWatch(
  options: ConversationOptions,
  {
    session,
    providers,
    languages,
    instructions,
    tools,
  }: {
    session: voice.AgentSession;
    providers: SessionProviders;
    languages: SpokenLanguages;
    instructions: string;
    tools: llm.ToolContext;
  },
) {
  const { metadata, logger } = options;
  const idle = watchIdleVisitor({
    session,
    timeoutSeconds: metadata.idle_timeout_seconds ?? 0,
    language: () => languages.speaking,
    reporter: options.reporter,
    logger,
  });
  // Not waited for: the conversation is under way from here, and one that ends before the
  // greeting (a visitor who typed at once and left) has what it leaves behind written at once
  // (agent/job.ts), not after agents' shutdown waits.
  void sayFirstWords({
    session,
    metadata,
    audible: options.audible,
    greetingVoice: options.greetingVoice,
    // The replies' prompt is read ahead once the greeting has been spoken (a visitor speaking
    // sooner has their reply read it): not beside the greeting's synthesis and first frames.
    // The visitor's silence counts from then on.
    afterGreeting(greeting) {
      idle.start();
      providers.prepareReplies(instructions, greeting, tools);
    },
    notGreeted: () => idle.start(),
    logger,
  }).catch((error) => logger.warn({ err: error }, 'the first words could not be said'));

  return idle;
}

/** What a conversation's turns go through: its languages and providers, its transcript, its turns' quality, the visitor's camera. */
function conversationServices(options: ConversationOptions) {
  const { ctx, metadata, logger } = options;
  const languages = new SpokenLanguages(metadata.language);
  const providers = createProviders(
    options.providers,
    { language: metadata.language, voice: metadata.voice, vad: options.vad },
    options.offline,
  );
  logger.info({ ...providers.names, language: metadata.language }, 'conversation providers');
  const transcripts = new TranscriptLog(options.reporter, logger);
  const quality = new TurnQuality({
    reporter: options.reporter,
    providers: providers.names,
    videoTally: options.videoTally,
    logger,
  });
  const camera = modelSeesCamera(metadata.visual_awareness, providers.names.llm)
    ? new CameraSampler({ room: ctx.room, visitorIdentity: metadata.visitor_identity, logger })
    : null;
  return { languages, providers, transcripts, quality, camera };
}

/** The agents session in the room, hearing the visitor alone; its speech goes out through our runner. */
async function listenTo(
  session: voice.AgentSession,
  { agent, room, visitor, logger }: { agent: voice.Agent; room: Room; visitor: RemoteParticipant; logger: AgentLogger },
): Promise<void> {
  await session.start({
    agent,
    room,
    // 16 kHz, what the VAD, the end-of-turn model, Deepgram and Whisper all hear. At agents'
    // default 24 kHz each of them resampled every 10 ms frame through its own FFI resampler:
    // about a quarter of a listening job's JS thread (bench/renderer, CPU profile).
    // Typed chat is ours (chat.ts): agents' own handler reads a message whole, however long.
    // The visitor may come back (SESSION_REJOIN_SECONDS): the control plane ends the session if not.
    inputOptions: {
      participantIdentity: visitor.identity,
      audioSampleRate: INPUT_SAMPLE_RATE,
      textEnabled: false,
      closeOnDisconnect: false,
    },
    // Our runner publishes the speech (with the avatar's video, or alone).
    outputOptions: { audioEnabled: false },
    record: false,
  });
  // Given the room, agents 1.9 also starts a remote-session host for the visitor (issue 28): it
  // could not hear them (agent/room-inputs.ts refused its topic), and now it tells them nothing.
  await closeRemoteSessionHost(session);
  // Captions (lk.transcription) keep time with the voice the visitor hears.
  if (!syncCaptionsToPlayback(session)) logger.warn('captions are not synchronised with the speech');
}

/** Waits for the visitor, then starts the session; the greeting follows once they can hear it (first-words.ts). */
export async function startConversation(options: ConversationOptions): Promise<Conversation> {
  const { ctx, metadata, logger } = options;
  const { languages, providers, transcripts, quality, camera } = conversationServices(options);
  const parts = conversationAgent({
    metadata,
    settings: options.providers,
    providers,
    languages,
    transcripts,
    quality,
    camera,
    orders: options.orders,
    reporter: options.reporter,
    participant: () => ctx.room.localParticipant,
    session: () => session,
    logger,
  });
  const session = agentSession(options, providers, languages);
  recordSessionTurns(session, {
    languages,
    transcripts,
    quality,
    knowledge: parts.knowledge,
    camera,
    orders: options.orders,
    onVisitorSpeaking: options.onVisitorSpeaking,
    logger,
  });
  onToolOutput(session, providers.toolResultIn);
  session.output.audio = options.speech;

  const visitor: RemoteParticipant = await ctx.waitForParticipant(metadata.visitor_identity);
  camera?.start();
  await listenTo(session, { agent: parts.agent, room: ctx.room, visitor, logger });
  acceptChat(ctx.room, visitor.identity, session, logger, (said) =>
    parts.endedOnFarewell(llm.ChatMessage.create({ role: 'user', content: said })),
  );
  // The backend's context orders join the start's in the instructions (the offline model reads them there too).
  options.orders?.serve({
    session,
    agent: parts.agent,
    instructionsWith: parts.instructionsWith,
  });
  const idle = greetAndWatch(options, {
    session,
    providers,
    languages,
    instructions: parts.instructions,
    tools: parts.agent.toolCtx,
  });
  return {
    session,
    async close() {
      idle.close();
      camera?.close();
      await session.close().catch(() => undefined);
      await Promise.all([transcripts.close(), quality.close()]);
    },
    ...afterwards(
      providers,
      () => session.history,
      metadata,
      () => languages.speaking,
      logger,
    ),
  };
}

/**
 * Whether a reply may be prepared before the visitor's turn is confirmed over (agents'
 * preemptive generation): not when the turn gains camera images or a language switch once it
 * has ended. The offline model sees no camera, so with it visual awareness (on by default with
 * an identity) no longer holds its replies back: Piper turns 1.21 → 0.97 s p50.
 */
export function repliesBeforeTurnEnds(
  metadata: Pick<ParsedDispatch, 'visual_awareness' | 'language'>,
  llmName: string,
): boolean {
  return !modelSeesCamera(metadata.visual_awareness, llmName) && metadata.language !== 'auto';
}

/** The session: its providers, how it takes turns and barge-in, and how long a reply may stall. */
function agentSession(
  options: ConversationOptions,
  providers: SessionProviders,
  languages: SpokenLanguages,
): voice.AgentSession {
  const turns = options.providers.turns;
  const { metadata } = options;
  return new voice.AgentSession({
    stt: providers.stt,
    llm: providers.llm,
    tts: providers.tts,
    vad: options.vad,
    turnHandling: {
      turnDetection: turnDetection(
        turns.detection,
        () => languages.heard ?? languages.speaking,
        options.sentenceReader,
      ),
      endpointing: { minDelay: turns.minEndpointingDelayMs, maxDelay: turns.maxEndpointingDelayMs },
      // 'vad': barge-in on the visitor's voice ('adaptive' is a LiveKit Cloud detector). A
      // false interruption is not resumed: the avatar's output cannot pause.
      interruption: { mode: 'vad', minDuration: turns.minInterruptionMs, resumeFalseInterruption: false },
      preemptiveGeneration: { enabled: repliesBeforeTurnEnds(metadata, providers.names.llm) },
    },
    // No echo to cancel: the visitor's client does that; interruptions work from the start.
    aecWarmupDuration: null,
    // The agents cut a reply whose speech has no next frame for 10 s, but that wait includes the
    // model writing the next sentence: the offline model on a busy machine took 13 s, and the
    // visitor heard "Sure," alone. A hung voice is still cut, later.
    ttsReadIdleTimeout: NEXT_SENTENCE_WAIT_MS,
    forwardAudioIdleTimeout: NEXT_SENTENCE_WAIT_MS,
  });
}
