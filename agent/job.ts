// One session's agent job. The worker forks a process per job and imports this file there,
// so nothing here shares memory with the control plane: the job learns its session from the
// dispatch metadata and reports back over HTTP.
import {
  AutoSubscribe,
  defineAgent,
  inference,
  type JobContext,
  type JobProcess,
  log,
  type VAD,
} from '@livekit/agents';
import { RoomEvent } from '@livekit/rtc-node';
import { JOB_MODELS_IN_BACKGROUND_VARIABLE, loadProviders } from '../src/config.ts';
import {
  type AvatarFallbackReport,
  avatarShapeFor,
  isSessionRoom,
  parseDispatchMetadata,
  type TranscriptReport,
  type TurnMetricsReport,
} from '../src/contract/index.ts';
import { prepareAvatar, startAvatar, startVoice } from './avatar/index.ts';
import { type Conversation, startConversation } from './conversation/index.ts';
import { deliver, httpReporter, meterRoomParticipants, StreamingMeter } from './metering/index.ts';
import { needsOfflineModels } from './providers/index.ts';
import type { OfflineModels, SentenceEnd } from './providers/offline/index.ts';
import { JOB_INPUTS, serveOnly } from './room-inputs.ts';
import { joinSessionsHere, replyThreadsHere } from './sessions-here.ts';

/** A conversation gets this long to close (last transcript turns included) before the job leaves anyway. */
const CONVERSATION_CLOSE_MS = 5_000;

async function closeWithin(
  conversation: Conversation | undefined,
  ms: number,
  logger: { warn(message: string): void },
): Promise<void> {
  if (!conversation) return;
  const closed = await Promise.race([conversation.close().then(() => true), Bun.sleep(ms).then(() => false)]);
  if (!closed) logger.warn(`the conversation did not close within ${ms} ms; leaving anyway`);
}

/** What the job process loads before it is given a job (agents' prewarm). */
interface ProcessData {
  vad?: VAD;
  /** Loaded before the process takes a job, or (a replacement process) while its first session starts. */
  offline?: Promise<OfflineModels | undefined>;
  /** SmolLM2 alone, for `transcript` turn detection when the replies come from a cloud model. */
  sentenceEnd?: SentenceEnd;
}

/**
 * agents 1.9 listens for the worker's shutdown request only once prewarm is over: one sent
 * while this process was still loading was lost, and the worker waited its whole shutdown
 * timeout (15 s) before killing it; every stop of the service paid that. With no job yet there
 * is nothing to finish: exit at once. Listening from import on, a request that comes right
 * behind the initialize request is caught too.
 */
const exitOnEarlyShutdown = (message: unknown) => {
  if ((message as { case?: unknown } | null)?.case === 'shutdownRequest') process.exit(0);
};
if (process.send) process.on('message', exitOnEarlyShutdown);

/**
 * Whether the worker asked this job to stop (it is stopping: drained, or shut down). A job
 * ends for other reasons too (its room closed, the visitor left); only this one leaves a
 * session that goes on, which the control plane must move to another worker or end.
 */
let stoppedByWorker = false;
if (process.send) {
  process.on('message', (message: unknown) => {
    if ((message as { case?: unknown } | null)?.case === 'shutdownRequest') stoppedByWorker = true;
  });
}

export default defineAgent({
  prewarm: async (proc: JobProcess) => {
    try {
      // Loading the voice-activity model blocks the event loop for a moment: not in a session.
      (proc.userData as ProcessData).vad = new inference.VAD();
      const providers = loadProviders(process.env);
      // Loading the offline models takes seconds: do it while the process waits for a job.
      if (!needsOfflineModels(providers)) {
        if (providers.turns.detection === 'transcript')
          (proc.userData as ProcessData).sentenceEnd = await loadSentenceReader(providers.modelsDir);
        return;
      }
      // Imported only here: a deployment with every cloud key never loads the model runtimes.
      const { loadOfflineModels } = await import('./providers/offline/index.ts');
      const loading = loadOfflineModels({ modelsDir: providers.modelsDir, replyThreads: () => replyThreadsHere() });
      if (!process.env[JOB_MODELS_IN_BACKGROUND_VARIABLE]) {
        (proc.userData as ProcessData).offline = Promise.resolve(await loading);
        return;
      }
      // A replacement for a process whose session ended (agent/worker.ts): its session's face
      // need not wait for the models, only its conversation does.
      (proc.userData as ProcessData).offline = loading.catch((error: unknown) => {
        log().error(
          { err: error },
          'the offline models could not be loaded; sessions of this process get no conversation',
        );
        return undefined;
      });
    } finally {
      // From here agents' own handler takes the shutdown request (it is added right after prewarm).
      process.off('message', exitOnEarlyShutdown);
    }
  },
  entry: async (ctx: JobContext) => {
    // Once the room is gone (the session ended) the job is over, wherever it was: entries were
    // seen still unfinished when agents' 15 s wait for them ran out, and all that time the
    // job held its slot (and its worker's heartbeats listed a session that had ended).
    const roomLeft = new Promise<void>((resolve) => ctx.room.once(RoomEvent.Disconnected, () => resolve()));
    await Promise.race([serveSession(ctx), roomLeft]);
  },
});

/** Without the models (a cloud-only install), `transcript` turns read the word list alone. */
async function loadSentenceReader(modelsDir: string): Promise<SentenceEnd | undefined> {
  try {
    const { loadOfflineSentenceEnd } = await import('./providers/offline/index.ts');
    return await loadOfflineSentenceEnd(modelsDir);
  } catch (error) {
    log().warn(`end-of-turn detection reads the word list only: ${(error as Error).message}`);
    return undefined;
  }
}

async function serveSession(ctx: JobContext): Promise<void> {
  const parsed = parseDispatchMetadata(ctx.job.metadata);
  if (!parsed.ok) {
    // Without a valid session the job can neither render nor bill: it never joins, and the
    // control plane sees its agent does not arrive.
    log().error(
      `job ${ctx.job.id} (room ${ctx.job.room?.name}) has invalid dispatch metadata, shutting down: ${parsed.problem}`,
    );
    ctx.shutdown('invalid dispatch metadata');
    return;
  }
  const metadata = parsed.metadata;
  const logger = log().child({ session_id: metadata.session_id });

  const meter = new StreamingMeter({
    intervalSeconds: metadata.billing_interval_seconds,
    visitorIdentity: metadata.visitor_identity,
    minuteOffset: metadata.minute_offset ?? 0,
    paidLeftMs: metadata.paid_left_ms ?? 0,
    reporter: httpReporter({ url: metadata.report_url, token: metadata.report_token }),
    logger,
  });
  // Shutdown callbacks run after the room is left: the meter delivers what it still holds,
  // the news that this agent is gone first when its worker stopped it.
  ctx.addShutdownCallback(() => {
    if (stoppedByWorker) meter.agentLeaving();
    return meter.close();
  });

  // The face loads while the job connects.
  const preparedAvatar = metadata.avatar_enabled
    ? prepareAvatar({
        identity: metadata.identity,
        shape: metadata.avatar_shape ?? avatarShapeFor(metadata.form_factor, true),
        logger,
      })
    : null;

  // Audio only: the visitor's camera is subscribed to by the conversation, and only with visual awareness.
  try {
    await ctx.connect(undefined, AutoSubscribe.AUDIO_ONLY);
  } catch (error) {
    // The session ended before the job got going (its room is gone).
    logger.warn(`could not join room ${ctx.job.room?.name}: ${(error as Error).message}`);
    ctx.shutdown('room unavailable');
    return;
  }
  if (!isSessionRoom(ctx.room.metadata, metadata.session_id)) {
    // A LiveKit that auto-creates rooms made a fresh one for this late job: nobody will come.
    logger.warn(`room ${ctx.room.name} is not session ${metadata.session_id}'s room any more; leaving`);
    ctx.shutdown('session room gone');
    return;
  }
  // Before anything registers a handler: the framework's defaults included (room-inputs.ts).
  serveOnly(ctx.room, JOB_INPUTS, logger);
  meter.agentJoined();
  meterRoomParticipants(ctx.room, meter);
  // Counted among the machine's sessions while it serves (the offline replies' threads follow the count).
  const leaveSessionsHere = joinSessionsHere();
  ctx.addShutdownCallback(async () => leaveSessionsHere());

  // The avatar streams from the moment the job is in the room (billing starts at its first frame).
  const avatar = preparedAvatar
    ? await startAvatar({
        room: ctx.room,
        prepared: preparedAvatar,
        onFirstFrame: (atMs) => meter.firstFramePublished(atMs),
        onFallback: (fallback) => {
          const reporter = httpReporter<AvatarFallbackReport>({
            url: metadata.report_url,
            token: metadata.report_token,
          });
          void deliver(reporter, { type: 'avatar_fallback', ...fallback }).then((delivered) => {
            if (!delivered) logger.warn('the avatar fallback could not be reported');
          });
        },
      })
    : null;
  if (avatar) ctx.addShutdownCallback(() => avatar.stop());
  const voiceOnly = avatar ? null : await startVoice({ room: ctx.room, logger });
  if (voiceOnly) ctx.addShutdownCallback(() => voiceOnly.stop());

  // Registered before the conversation starts: it waits for the visitor, who may never come.
  let conversation: Conversation | undefined;
  let leaving = false;
  ctx.addShutdownCallback(async () => {
    leaving = true;
    await closeWithin(conversation, CONVERSATION_CLOSE_MS, logger);
  });
  // The face streams already; a process that took the job while loading its models finishes here.
  const offline = await (ctx.proc.userData as ProcessData).offline;
  if (leaving) return;
  conversation = await startConversation({
    ctx,
    metadata,
    providers: loadProviders(process.env),
    offline,
    sentenceReader: offline?.sentenceEnd ?? (ctx.proc.userData as ProcessData).sentenceEnd,
    vad: (ctx.proc.userData as ProcessData).vad ?? new inference.VAD(),
    speech: (avatar ?? voiceOnly)!.speech,
    audible: (avatar ?? voiceOnly)!.audible,
    onVisitorSpeaking: (speaking) => avatar?.visitorSpeaking(speaking),
    transcriptReporter: httpReporter<TranscriptReport>({ url: metadata.report_url, token: metadata.report_token }),
    qualityReporter: httpReporter<TurnMetricsReport>({ url: metadata.report_url, token: metadata.report_token }),
    framesPublished: avatar?.framesPublished,
    logger,
  });
  if (leaving) await closeWithin(conversation, CONVERSATION_CLOSE_MS, logger);
}
