// One session's agent job. The worker forks a process per job and imports this file there,
// so nothing here shares memory with the control plane: the job learns its session from the
// dispatch metadata and reports back over HTTP.
import { AutoSubscribe, defineAgent, log, type JobContext } from '@livekit/agents';
import { parseJobMetadata } from './metadata.ts';
import { httpReporter, meterRoomParticipants, StreamingMeter } from './metering/index.ts';
import { avatarFrameSize, createAvatarRenderer } from './renderers/index.ts';

/** The control plane creates each session's room with metadata naming the session. */
function isSessionRoom(roomMetadata: string | undefined, sessionId: string): boolean {
  try {
    return (JSON.parse(roomMetadata ?? '') as { session_id?: unknown }).session_id === sessionId;
  } catch {
    return false;
  }
}

export default defineAgent({
  entry: async (ctx: JobContext) => {
    const parsed = parseJobMetadata(ctx.job.metadata);
    if (!parsed.ok) {
      // Without a valid session the job can neither render nor bill: it never joins, and the
      // control plane sees its agent does not arrive.
      log().error(`job ${ctx.job.id} (room ${ctx.job.room?.name}) has invalid dispatch metadata, shutting down: ${parsed.problem}`);
      ctx.shutdown('invalid dispatch metadata');
      return;
    }
    const metadata = parsed.metadata;
    const logger = log().child({ session_id: metadata.session_id });

    const meter = new StreamingMeter({
      intervalSeconds: metadata.billing_interval_seconds,
      visitorIdentity: metadata.visitor_identity,
      reporter: httpReporter({ url: metadata.report_url, token: metadata.report_token }),
      logger,
    });
    // Shutdown callbacks run after the room is left: the meter delivers what it still holds.
    ctx.addShutdownCallback(() => meter.close());

    // Audio only: the visitor's camera is not used yet (visual awareness comes with the voice pipeline).
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
    meterRoomParticipants(ctx.room, meter);

    if (!metadata.avatar_enabled) return;
    const renderer = createAvatarRenderer({
      identity: metadata.identity,
      size: avatarFrameSize(metadata.form_factor),
      onFirstFrame: (atMs) => meter.firstFramePublished(atMs),
      logger,
    });
    ctx.addShutdownCallback(() => renderer.stop());
    await renderer.start(ctx.room);
  },
});
