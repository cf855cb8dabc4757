// A voice sample as the API takes it. Browsers record WebM/Opus (Chrome, Firefox) or
// Ogg/Opus, which the API refuses (415: its allowed audio types are WAV, MP3 and MP4 audio;
// docs/decisions.md): the console decodes such a file in the browser and uploads it as WAV,
// so a recording made on a phone or a laptop works as it is.
const BROWSER_RECORDING = /^(audio|video)\/(webm|ogg)\b|\.(webm|ogg|oga|opus)$/i;
/** Mono 16-bit PCM at a rate voice cloning needs no more than. */
const SAMPLE_RATE = 24_000;

/** What the file input offers: the API's types and the browsers' recordings. */
export const VOICE_FILE_TYPES = 'audio/wav,audio/mpeg,audio/mp4,audio/webm,audio/ogg,.webm,.ogg,.opus';

/** `file` itself, or, for a browser recording, the same voice as a WAV file. */
export async function uploadableVoice(file: File): Promise<File> {
  if (!BROWSER_RECORDING.test(file.type) && !BROWSER_RECORDING.test(file.name)) return file;
  let decoded: AudioBuffer;
  try {
    // An offline context decodes and resamples to its own rate in one step.
    decoded = await new OfflineAudioContext(1, 1, SAMPLE_RATE).decodeAudioData(await file.arrayBuffer());
  } catch {
    throw new Error(`${file.name} could not be read as a recording: record again, or choose a WAV, MP3 or M4A file.`);
  }
  const name = `${file.name.replace(/\.[^.]+$/, '')}.wav`;
  return new File([wavBytes(mono(decoded))], name, { type: 'audio/wav' });
}

function mono(buffer: AudioBuffer): Float32Array {
  const mixed = new Float32Array(buffer.length);
  for (let channel = 0; channel < buffer.numberOfChannels; channel++) {
    const samples = buffer.getChannelData(channel);
    for (let i = 0; i < samples.length; i++) mixed[i]! += samples[i]! / buffer.numberOfChannels;
  }
  return mixed;
}

function wavBytes(samples: Float32Array): ArrayBuffer {
  const bytes = new ArrayBuffer(44 + samples.length * 2);
  const view = new DataView(bytes);
  const text = (offset: number, value: string) =>
    [...value].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, SAMPLE_RATE, true);
  view.setUint32(28, SAMPLE_RATE * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++)
    view.setInt16(44 + i * 2, Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32767), true);
  return bytes;
}
