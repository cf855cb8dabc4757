// One session's agent job. The worker forks a process per job and imports this file there,
// so nothing here shares memory with the control plane: the job learns its session from the
// dispatch metadata and reports back over HTTP.
import { AutoSubscribe, defineAgent, inference, type JobContext, type JobProcess, type VAD } from '@livekit/agents';
import { RoomEvent } from '@livekit/rtc-node';
import { loadProviders } from '../src/config.ts';
import {
  type AvatarFallbackReport,
  avatarShapeFor,
  isSessionRoom,
  type ParsedDispatch,
  parseDispatchMetadata,
} from '../src/contract/index.ts';
import {
  listenToWorker,
  modelsInBackground,
  onStopRequested,
  prewarmDone,
  runInference,
  stoppedByWorker,
} from './agents-adapter/index.ts';
import { type PreparedAvatar, prepareAvatar, startAvatar, startVoice, tracksReceived } from './avatar/index.ts';
import { startConversation } from './conversation/index.ts';
import { takeOrders } from './conversation/orders.ts';
import { prepareSessionGreeting } from './conversation/prepared-greeting.ts';
import { readingWithin, type SentenceReader } from './conversation/transcript-turns.ts';
import { endingOfConversation } from './conversation-ending.ts';
import { type JobShutdown, jobShutdown } from './job-shutdown.ts';
import { type AgentLogger, agentLog, jobLogger } from './logging.ts';
import { needsOfflineModels, readsSentencesInInferenceProcess } from './providers/index.ts';
import type { OfflineModels } from './providers/offline/index.ts';
import { SENTENCE_END_INFERENCE, type SentenceEndRequest } from './providers/offline/sentence-end-runner.ts';
import { recordJob } from './recording/index.ts';
import { deliver, httpReporter, meterRoomParticipants, type Reporter, StreamingMeter } from './reports/index.ts';
import { sessionOver } from './room-at-livekit.ts';
import { JOB_INPUTS, serveOnly } from './room-inputs.ts';
import { joinSessionsHere, replyThreadsHere } from './sessions-here.ts';

/** What the job process loads before it is given a job (agents' prewarm). */
interface ProcessData {
  vad?: VAD;
  /** Loaded before the process takes a job, or (a replacement process) while its first session starts. */
  offline?: Promise<OfflineModels | undefined>;
}

// From import on: a shutdown request during prewarm ends the process at once, and one later
// tells the job its session goes on elsewhere (agents-adapter/job.ts).
listenToWorker();

export default defineAgent<ProcessData>({
  prewarm: async (proc: JobProcess<ProcessData>) => {
    try {
      // Loading the voice-activity model blocks the event loop for a moment: not in a session.
      proc.userData.vad = new inference.VAD();
      const providers = loadProviders(process.env);
      // Loading the offline models takes seconds: do it while the process waits for a job.
      // With cloud replies, SmolLM2 reads sentences in the worker's inference process (sentenceReaderOf).
      if (!needsOfflineModels(providers)) return;
      // Imported only here: a deployment with every cloud key never loads the model runtimes.
      const { loadOfflineModels } = await import('./providers/offline/index.ts');
      const loading = loadOfflineModels({ modelsDir: providers.modelsDir, replyThreads: () => replyThreadsHere() });
      if (!modelsInBackground()) {
        proc.userData.offline = Promise.resolve(await loading);
        return;
      }
      // A replacement for a process whose session ended (agent/worker.ts): its session's face
      // need not wait for the models, only its conversation does.
      proc.userData.offline = loading.catch((error: unknown) => {
        agentLog().error({ err: error }, 'the offline models could not be loaded; sessions here get no conversation');
        return undefined;
      });
    } finally {
      prewarmDone();
    }
  },
  entry: async (ctx: JobContext<ProcessData>) => {
    // Once the room is gone (the session ended) the job is over, wherever it was: entries were
    // seen still unfinished when agents' 15 s wait for them ran out, and all that time the
    // job held its slot (and its worker's heartbeats listed a session that had ended).
    const roomLeft = new Promise<void>((resolve) => ctx.room.once(RoomEvent.Disconnected, () => resolve()));
    await Promise.race([serveSession(ctx), roomLeft]);
  },
});

/**
 * A reading in the inference process takes tens of ms (SmolLM2 on ~20 tokens, and agents' IPC),
 * but agents' requests have no deadline: one lost with a restarting inference process would hold
 * the turn open for good. Past this the word list decides.
 */
const SENTENCE_READING_WITHIN_MS = 1_000;

/**
 * What reads the visitor's sentences for `transcript` turns: the offline models' SmolLM2 in this
 * process, or with cloud replies the one in the worker's inference process (loaded once per
 * worker, sentence-end-runner.ts). Not loaded in the session either way: loading holds the
 * job's event loop ~0.1 s twice (node-llama-cpp's start, the model's), and in a session that
 * froze the face's first frames or let a camera frame taken after the visitor stopped into
 * their turn. Without the models (a cloud-only install) the word list decides alone.
 */
function sentenceReaderOf(
  ctx: JobContext<ProcessData>,
  offline: OfflineModels | undefined,
): SentenceReader | undefined {
  if (offline) return offline.sentenceEnd;
  if (!readsSentencesInInferenceProcess(loadProviders(process.env))) return undefined;
  return readingWithin(
    { probability: (text) => runInference<SentenceEndRequest, number>(ctx, SENTENCE_END_INFERENCE, { text }) },
    SENTENCE_READING_WITHIN_MS,
  );
}

/** What every step of a session's job is given. */
interface SessionJob {
  ctx: JobContext<ProcessData>;
  metadata: ParsedDispatch;
  logger: AgentLogger;
  /** Every report of the session goes to the same endpoint, with the session's token. */
  reporter: Reporter;
  shutdown: JobShutdown;
}

async function serveSession(ctx: JobContext<ProcessData>): Promise<void> {
  const job = readDispatch(ctx);
  if (!job) return;
  const meter = meterSession(job);
  // The face loads and the greeting is voiced while the job connects.
  const preparedAvatar = prepareFace(job);
  const greetingVoice = (ctx.proc.userData.offline ?? Promise.resolve(undefined)).then((offline) =>
    prepareSessionGreeting(job.metadata, loadProviders(process.env), offline, job.logger),
  );
  if (!(await joinRoom(job))) return;
  meter.agentJoined();
  meterRoomParticipants(ctx.room, meter);
  // The backend's orders (and the visitor's app's, when allowed): carried out once the conversation runs.
  const orders = takeOrders({ room: ctx.room, metadata: job.metadata, reporter: job.reporter, logger: job.logger });
  job.shutdown.add(async () => orders.close());
  // Counted among the machine's sessions while it serves (the offline replies' threads follow the count).
  const leaveSessionsHere = joinSessionsHere();
  job.shutdown.add(async () => leaveSessionsHere());
  const face = await startFace(job, preparedAvatar, meter);
  handOverIfUndelivered(job, face.trackSids(), meter);
  const ending = endingOfConversation({
    room: ctx.room,
    access: ctx.info,
    sessionId: job.metadata.session_id,
    logger: job.logger,
    reporter: job.reporter,
    shutdown: job.shutdown,
  });
  // The face streams already; a process that took the job while loading its models finishes here.
  const offline = await ctx.proc.userData.offline;
  if (ending.leaving()) return;
  const conversation = await startConversation({
    ctx,
    metadata: job.metadata,
    providers: loadProviders(process.env),
    offline,
    greetingVoice,
    sentenceReader: sentenceReaderOf(ctx, offline),
    vad: ctx.proc.userData.vad ?? new inference.VAD(),
    speech: face.speech,
    audible: face.audible,
    onVisitorSpeaking: (speaking) => face.avatar?.visitorSpeaking(speaking),
    reporter: job.reporter,
    orders,
    videoTally: face.avatar?.videoTally,
    logger: job.logger,
  });
  await ending.began(conversation);
}

/** The session the job is for, from its dispatch; none (and the job ends) when that is not valid. */
function readDispatch(ctx: JobContext<ProcessData>): SessionJob | undefined {
  const job = { job_id: ctx.job.id, room: ctx.job.room?.name };
  const parsed = parseDispatchMetadata(ctx.job.metadata);
  if (!parsed.ok) {
    // Without a valid session the job can neither render nor bill: it never joins, and the
    // control plane sees its agent does not arrive.
    jobLogger(job).error({ problem: parsed.problem }, 'invalid dispatch metadata; shutting down');
    ctx.shutdown('invalid dispatch metadata');
    return undefined;
  }
  const metadata = parsed.metadata;
  const logger = jobLogger({ session_id: metadata.session_id, ...job, participant: metadata.visitor_identity });
  return {
    ctx,
    metadata,
    logger,
    reporter: httpReporter({ url: metadata.report_url, token: metadata.report_token }),
    shutdown: jobShutdown(ctx, logger),
  };
}

function meterSession({ ctx, metadata, reporter, logger, shutdown }: SessionJob): StreamingMeter {
  const meter = new StreamingMeter({
    intervalSeconds: metadata.billing_interval_seconds,
    visitorIdentity: metadata.visitor_identity,
    minuteOffset: metadata.minute_offset ?? 0,
    paidLeftMs: metadata.paid_left_ms ?? 0,
    reporter,
    logger,
  });
  // The worker stopping (a drain's end): a session that goes on moves to another worker as the
  // request arrives, not once agents has closed this job (seconds; drain.test on CI: over 20 s).
  // LiveKit's end of a job whose room was deleted comes as the same request: the room tells.
  onStopRequested(() => {
    void sessionOver(ctx.info, metadata.session_id, true, logger).then((over) => {
      if (!over) meter.agentLeaving();
    });
  });
  // Shutdown callbacks run after the room is left: the meter delivers what it still holds,
  // the news that this agent is gone first when its worker stopped it (if not said above).
  shutdown.add(() => {
    if (stoppedByWorker()) meter.agentLeaving();
    return meter.close();
  });
  return meter;
}

function prepareFace({ metadata, logger }: SessionJob): PreparedAvatar | null {
  if (!metadata.avatar_enabled) return null;
  return prepareAvatar({
    identity: metadata.identity,
    shape: metadata.avatar_shape ?? avatarShapeFor(metadata.form_factor, true),
    test: metadata.test === true,
    logger: metadata.identity ? logger.child({ identity_id: metadata.identity.identity_id }) : logger,
  });
}

/** Into the session's room; false (and the job ends) when it is gone. */
async function joinRoom({ ctx, metadata, logger }: SessionJob): Promise<boolean> {
  // Audio only: the visitor's camera is subscribed to by the conversation, and only with visual awareness.
  // Dynacast: LiveKit pauses the face's video encoder while nobody subscribes to it (before the
  // visitor comes, a visitor on audio only or with the tab hidden): half the job's CPU then.
  try {
    await ctx.connect(undefined, AutoSubscribe.AUDIO_ONLY, undefined, true);
  } catch (error) {
    // The session ended before the job got going (its room is gone).
    logger.warn({ err: error }, 'could not join the room');
    ctx.shutdown('room unavailable');
    return false;
  }
  if (!isSessionRoom(ctx.room.metadata, metadata.session_id)) {
    // A LiveKit that auto-creates rooms made a fresh one for this late job: nobody will come.
    logger.warn("the room is not the session's any more; leaving");
    ctx.shutdown('session room gone');
    return false;
  }
  // Before anything registers a handler: the framework's defaults included (room-inputs.ts).
  serveOnly(ctx.room, JOB_INPUTS, logger);
  return true;
}

/** The avatar (or the voice alone), recorded when the session is; it streams from the moment the job is in the room. */
async function startFace(job: SessionJob, prepared: PreparedAvatar | null, meter: StreamingMeter) {
  const { ctx, metadata, logger, reporter, shutdown } = job;
  // A recorded session (contract/recordings.ts): this job's part, from the avatar's first frame on.
  const recording =
    metadata.record === true
      ? recordJob({
          room: ctx.room,
          sessionId: metadata.session_id,
          part: ctx.job.id,
          reportUrl: metadata.report_url,
          reportToken: metadata.report_token,
          visitorIdentity: metadata.visitor_identity,
          logger,
        })
      : null;
  if (recording) shutdown.add(() => recording.stop());
  // Billing starts at the avatar's first frame.
  const avatar = prepared
    ? await startAvatar({
        room: ctx.room,
        prepared,
        recorder: recording?.recorder,
        onFirstFrame: (atMs) => meter.firstFramePublished(atMs),
        onFallback: (fallback) => {
          const report: AvatarFallbackReport = { type: 'avatar_fallback', ...fallback };
          void deliver(reporter, report).then((delivered) => {
            if (!delivered) logger.warn('the avatar fallback could not be reported');
          });
        },
      })
    : null;
  if (avatar) {
    shutdown.add(() => avatar.stop());
    return { avatar, speech: avatar.speech, audible: avatar.audible, trackSids: avatar.trackSids };
  }
  const voiceOnly = await startVoice({ room: ctx.room, logger, recorder: recording?.recorder });
  shutdown.add(() => voiceOnly.stop());
  return { avatar: null, speech: voiceOnly.speech, audible: voiceOnly.audible, trackSids: voiceOnly.trackSids };
}

/**
 * Tracks LiveKit never received (avatar/delivery.ts): the visitor would watch a call with no
 * face and no voice. The session goes to a new job, on a new connection, and this one leaves.
 */
function handOverIfUndelivered({ ctx, logger, shutdown }: SessionJob, trackSids: string[], meter: StreamingMeter) {
  const left = new AbortController();
  shutdown.add(async () => left.abort());
  const check = {
    access: ctx.info,
    roomName: ctx.room.name ?? '',
    identity: ctx.room.localParticipant?.identity ?? '',
    trackSids,
    signal: left.signal,
  };
  void tracksReceived(check).then((answer) => {
    if (answer.state !== 'missing') return;
    logger.warn({ missing: answer.missing }, "LiveKit never received the job's tracks; a new job takes the session");
    meter.agentLeaving('tracks_not_received');
    ctx.shutdown('tracks not received');
  });
}
