// The conversation: one AgentSession per job, listening to the visitor (voice-activity and
// end-of-turn detection, barge-in), thinking with the identity's prompt and speaking in the
// session's language, through the avatar when there is one. The client sends nothing but
// its microphone (and camera, with visual awareness).
import { inference, type JobContext, llm, type VAD, voice } from '@livekit/agents';
import type { RemoteParticipant } from '@livekit/rtc-node';
import type { ProviderSettings, TurnDetection } from '../../src/config.ts';
import type {
  AgentEndedReport,
  ParsedDispatch,
  SpokenLanguage,
  TranscriptReport,
  TurnMetricsReport,
  VisitorIdleReport,
} from '../../src/contract/index.ts';
import { closeRemoteSessionHost, syncCaptionsToPlayback } from '../agents-adapter/index.ts';
import type { AgentLogger } from '../logging.ts';
import { createProviders } from '../providers/index.ts';
import type { OfflineModels } from '../providers/offline/index.ts';
import { deliver, type Reporter } from '../reports/index.ts';
import { type Afterwards, afterwards } from './afterwards.ts';
import { CameraSampler } from './camera.ts';
import { acceptChat } from './chat.ts';
import { isFarewell } from './farewells.ts';
import { plannedGreeting, recordingNotice } from './greeting.ts';
import { IdentityAgent } from './identity-agent.ts';
import { watchIdleVisitor } from './idle.ts';
import { agentInstructions, followLanguageInstruction, isSpokenLanguage } from './instructions.ts';
import { KnowledgeTurns, OFFLINE_KNOWLEDGE_CHARS } from './knowledge.ts';
import type { OrderTaker } from './orders.ts';
import { type PreparedGreeting, playable } from './prepared-greeting.ts';
import { TurnQuality, turnMetricsFields } from './quality.ts';
import { addQuotedData, fromVisitorApp, rememberedFacts } from './quoted-data.ts';
import { conversationTools, endOnFarewell, type ToolsOptions } from './tools.ts';
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
  /** Video frames the avatar published so far (its delivered fps); absent when the job draws no face. */
  framesPublished?: () => number;
  /** The backend's and the visitor's app's orders (orders.ts), carried out once the conversation has started. */
  orders?: OrderTaker;
  logger: AgentLogger;
}

/** A running conversation; once closed, what it leaves behind (afterwards.ts). */
export interface Conversation extends Afterwards {
  session: voice.AgentSession;
  close(): Promise<void>;
}

/**
 * How long the greeting waits for the visitor to hear the agent. Usually a few hundred ms;
 * a client that never subscribes (a bot, a broken one) is greeted anyway.
 */
const GREETING_WAIT_MS = 3_000;
/**
 * …and then this long: the visitor's first video frame (a keyframe, encoded and sent on
 * request once they subscribe) comes first, and the greeting's synthesis, which starts the
 * moment it is said, does not take the CPU that frame needs (measured, docs/benchmarks.md).
 */
const GREETING_AFTER_HEARD_MS = 400;
/** …or this long when its voice was made ahead (prepared-greeting.ts): only the frame's own time. */
const PREPARED_GREETING_AFTER_HEARD_MS = 100;
/** How long a reply's speech waits for its next sentence before it is taken for hung. */
const NEXT_SENTENCE_WAIT_MS = 45_000;

/** One language normalised from whatever the STT reports ('es', 'es-ES', 'Spanish'…). */
function spokenLanguageOf(reported: unknown): SpokenLanguage | null {
  if (typeof reported !== 'string') return null;
  const code = reported.toLowerCase().split(/[-_]/)[0];
  return isSpokenLanguage(code) ? code : null;
}

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

/** Waits for the visitor, then starts the session and greets them. */
export async function startConversation(options: ConversationOptions): Promise<Conversation> {
  const { ctx, metadata, logger } = options;
  const mode = metadata.language;
  const providers = createProviders(options.providers, { language: mode, voice: metadata.voice }, options.offline);
  logger.info({ ...providers.names, language: mode }, 'conversation providers');

  const transcripts = new TranscriptLog(options.reporter, logger);
  const quality = new TurnQuality({
    reporter: options.reporter,
    providers: providers.names,
    framesPublished: options.framesPublished,
    logger,
  });
  const camera = metadata.visual_awareness
    ? new CameraSampler({ room: ctx.room, visitorIdentity: metadata.visitor_identity, logger })
    : null;
  /** The language the agent speaks now: pinned, or in auto mode the visitor's last detected one. */
  let speaking: SpokenLanguage = mode === 'auto' ? 'en' : mode;
  let heard: SpokenLanguage | null = null;

  // Documents' passages and the visitor's app's notes reach the model as quoted data.
  const quotedData = Boolean(metadata.knowledge_url || metadata.client_control);
  // What is remembered of a returning visitor, quoted to every generation (memory.ts).
  const facts = metadata.memory?.facts ?? [];
  const remembered = facts.length > 0 ? [rememberedFacts(facts)] : [];
  const instructions = agentInstructions({
    prompt: metadata.identity?.prompt ?? null,
    context: metadata.context,
    language: mode,
    visualAwareness: metadata.visual_awareness,
    quotedData,
    remembers: remembered.length > 0,
  });
  const knowledge = metadata.knowledge_url
    ? new KnowledgeTurns({
        url: metadata.knowledge_url,
        reportToken: metadata.report_token,
        language: () => speaking,
        logger,
        // The offline model reads a long prompt slowly: 2,400 characters of passages put its
        // first word ~7.5 s later (bench/knowledge); it gets the best passage, cut.
        maxChars: options.providers.openai ? undefined : OFFLINE_KNOWLEDGE_CHARS,
      })
    : null;
  const toolsOptions: ToolsOptions = {
    tools: metadata.tools ?? [],
    toolCallsUrl: metadata.tool_calls_url,
    reportToken: metadata.report_token,
    visitorIdentity: metadata.visitor_identity,
    participant: () => ctx.room.localParticipant,
    language: () => speaking,
    onCall(call) {
      logger.info({ tool: call.name, outcome: call.outcome, duration_ms: call.duration_ms }, 'tool call');
      transcripts.recordToolCall(call);
      quality.toolCall(call);
    },
    async endSession() {
      logger.info('the agent ended the session (end_session tool)');
      if (!(await deliver(options.reporter, { type: 'agent_ended' }))) logger.warn('agent_ended could not be reported');
    },
    logger,
  };
  const tools = conversationTools(toolsOptions);
  // The offline model never called end_session for a goodbye: there, a farewell the rule tells ends the session.
  const endsOnFarewell =
    providers.names.llm === 'offline' ? metadata.tools?.find((tool) => tool.type === 'end_session') : undefined;
  /** A visitor's turn (spoken or typed) that takes leave: the goodbye, then the end; no reply. */
  const endedOnFarewell = (message: llm.ChatMessage): boolean => {
    if (!endsOnFarewell || !isFarewell(message.textContent ?? '')) return false;
    // agents adds a visitor's turn to the conversation only with the reply it gets: added here
    // as it does (the history, then the event the transcript listens to), before the goodbye.
    session.history.insert(message);
    session.emit(voice.AgentSessionEventTypes.ConversationItemAdded, voice.createConversationItemAddedEvent(message));
    void endOnFarewell(session, endsOnFarewell, toolsOptions);
    return true;
  };
  const agent = new IdentityAgent(instructions, tools, {
    async beforeGeneration(chatCtx) {
      addQuotedData(chatCtx, 'visitor_memory', remembered);
      addQuotedData(chatCtx, 'visitor_notes', (options.orders?.visitorNotes() ?? []).map(fromVisitorApp));
      await knowledge?.addTo(chatCtx);
    },
    async beforeReply(chatCtx, message) {
      if (endedOnFarewell(message)) throw new voice.StopResponse();
      if (mode === 'auto' && heard) {
        if (heard !== speaking) {
          speaking = heard;
          providers.speakIn(heard);
        }
        chatCtx.addMessage({ role: 'system', content: followLanguageInstruction(heard) });
      }
      for (const image of (await camera?.takeFrames()) ?? []) {
        message.content.push(llm.createImageContent({ image, inferenceDetail: 'low' }));
      }
    },
  });

  const turns = options.providers.turns;
  const session = new voice.AgentSession({
    stt: providers.stt,
    llm: providers.llm,
    tts: providers.tts,
    vad: options.vad,
    turnHandling: {
      turnDetection: turnDetection(turns.detection, () => heard ?? speaking, options.sentenceReader),
      endpointing: { minDelay: turns.minEndpointingDelayMs, maxDelay: turns.maxEndpointingDelayMs },
      // 'vad': barge-in on the visitor's voice ('adaptive' is a LiveKit Cloud detector). A
      // false interruption is not resumed: the avatar's output cannot pause.
      interruption: { mode: 'vad', minDuration: turns.minInterruptionMs, resumeFalseInterruption: false },
      // A reply prepared before the turn ends would miss the camera images and the language
      // switch that are only added once it has ended.
      preemptiveGeneration: { enabled: !metadata.visual_awareness && mode !== 'auto' },
    },
    // No echo to cancel: the visitor's client does that; interruptions work from the start.
    aecWarmupDuration: null,
    // The agents cut a reply whose speech has no next frame for 10 s, but that wait includes the
    // model writing the next sentence: the offline model on a busy machine took 13 s, and the
    // visitor heard "Sure," alone. A hung voice is still cut, later.
    ttsReadIdleTimeout: NEXT_SENTENCE_WAIT_MS,
    forwardAudioIdleTimeout: NEXT_SENTENCE_WAIT_MS,
  });

  session.on(voice.AgentSessionEventTypes.UserInputTranscribed, (event) => {
    if (!event.isFinal) return;
    const language = spokenLanguageOf(event.language);
    if (language) heard = language;
  });
  /** The longest a visitor's spoken turn is taken to have lasted before its words were recognised. */
  const MAX_TURN_SPEECH_MS = 30_000;
  /** When the visitor began speaking since their last turn: that turn's start (captions span the speech). */
  let visitorSpeakingSince: number | undefined;
  session.on(voice.AgentSessionEventTypes.UserStateChanged, (event) => {
    if (event.newState === 'speaking') visitorSpeakingSince ??= event.createdAt;
    camera?.setSpeaking(event.newState === 'speaking');
    options.onVisitorSpeaking?.(event.newState === 'speaking');
  });
  session.on(voice.AgentSessionEventTypes.ConversationItemAdded, (event) => {
    const item = event.item;
    if (item.type !== 'message' || (item.role !== 'user' && item.role !== 'assistant')) return;
    const answered = item.role === 'assistant' ? knowledge?.takeForAgentTurn() : null;
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
      language: item.role === 'user' ? (mode === 'auto' ? heard : mode) : speaking,
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

  session.output.audio = options.speech;

  const visitor: RemoteParticipant = await ctx.waitForParticipant(metadata.visitor_identity);
  camera?.start();
  await session.start({
    agent,
    room: ctx.room,
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
  acceptChat(ctx.room, visitor.identity, session, logger, (said) =>
    endedOnFarewell(llm.ChatMessage.create({ role: 'user', content: said })),
  );
  // The backend's context orders join the start's in the instructions (the offline model reads them there too).
  options.orders?.serve({
    session,
    agent,
    instructionsWith: (added) =>
      agentInstructions({
        prompt: metadata.identity?.prompt ?? null,
        context: [metadata.context, ...added].filter(Boolean).join('\n'),
        language: mode,
        visualAwareness: metadata.visual_awareness,
        quotedData,
      }),
  });
  const idle = watchIdleVisitor({
    session,
    timeoutSeconds: metadata.idle_timeout_seconds ?? 0,
    language: () => speaking,
    reporter: options.reporter,
    logger,
  });
  // Spoken once the visitor hears us: earlier, its first words would be lost, and during a
  // burst its synthesis would take the CPU the visitors' first frames need.
  await Promise.race([options.audible, Bun.sleep(GREETING_WAIT_MS)]);
  // Voiced ahead (prepared-greeting.ts), or still being voiced: a synthesis under way is ahead of
  // a new one, and a voice made takes no CPU from the visitor's first frame, which need not be waited for.
  const prepared = await options.greetingVoice;
  const preparedFrames = prepared ? await prepared.frames : null;
  await Bun.sleep(preparedFrames ? PREPARED_GREETING_AFTER_HEARD_MS : GREETING_AFTER_HEARD_MS);
  try {
    // The start's greeting is said as given; "" says nothing until the visitor speaks. A
    // visitor who spoke or typed first is answered instead: a greeting after that answer reads
    // as the agent starting over.
    const visitorFirst = session.history.items.some((item) => item.type === 'message' && item.role === 'user');
    const greeting = visitorFirst ? '' : plannedGreeting(metadata);
    const voiced = greeting && greeting === prepared?.text ? preparedFrames : null;
    // A recorded session's notice comes first, whole (not interruptible), even to a visitor
    // who spoke first or a session without a greeting: they are told before anything else.
    const notice = recordingNotice(metadata);
    const noticed = notice ? session.say(notice, { allowInterruptions: false }).waitForPlayout() : Promise.resolve();
    noticed.catch(() => undefined);
    const greeted = greeting
      ? session.say(greeting, voiced ? { audio: playable(voiced) } : undefined).waitForPlayout()
      : noticed;
    // The replies' prompt is read ahead once the greeting has been spoken (a visitor speaking
    // sooner has their reply read it): not beside the greeting's synthesis and first frames.
    // The visitor's silence counts from then on.
    void greeted.then(
      () => {
        idle.start();
        providers.prepareReplies(instructions, greeting);
      },
      () => idle.start(),
    );
  } catch (error) {
    // The session closed while waiting (the visitor left at once): nobody to greet.
    logger.info({ err: error }, 'no greeting');
  }

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
      () => speaking,
      logger,
    ),
  };
}
