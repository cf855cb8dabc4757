// A camera as a WebRTC client publishes one to LiveKit: a video source of one size, published as
// the participant's camera track, then shown RGBA pictures.
import {
  LocalVideoTrack,
  type Room,
  TrackPublishOptions,
  TrackSource,
  VideoBufferType,
  VideoFrame,
  VideoSource,
} from '@livekit/rtc-node';

export interface CameraTrack {
  /** The publication's track sid. */
  sid: string;
  source: VideoSource;
  /** Captures `pixels` (RGBA, the camera's size) as the next frame, at `timestampUs` if given. */
  show(pixels: Uint8Array, timestampUs?: bigint): void;
}

export async function publishCameraTrack(
  room: Room,
  { name, width, height, simulcast }: { name: string; width: number; height: number; simulcast?: boolean },
): Promise<CameraTrack> {
  const source = new VideoSource(width, height);
  const publication = await room.localParticipant!.publishTrack(
    LocalVideoTrack.createVideoTrack(name, source),
    new TrackPublishOptions({ source: TrackSource.SOURCE_CAMERA, ...(simulcast === undefined ? {} : { simulcast }) }),
  );
  return {
    sid: publication.sid!,
    source,
    show: (pixels, timestampUs) =>
      source.captureFrame(new VideoFrame(pixels, width, height, VideoBufferType.RGBA), timestampUs),
  };
}
