// The second chunk, /embed/livekit.js: livekit-client and the console's room wrapper (join,
// play the avatar's picture and voice, read the transcription streams). The element fetches
// it on the first call (or when the call button is pointed at), so a page that only shows the
// button loads a few kilobytes.
export { TalkRoom } from '../../console/web/room.ts';
