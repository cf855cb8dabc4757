// Spoken samples for the voice tests: real speech from espeak-ng (`apt-get install espeak-ng`).
export const SAMPLE_TEXT =
  'Hello, my name is Ada. I help visitors find their way around the museum, and I love to talk about old maps, ' +
  'ships and the people who sailed them across the ocean.';

/** A WAV of `text` as espeak-ng speaks it; `pitch` is espeak's 0–99 scale, `wordsPerMinute` its -s. */
export async function espeakWav(
  text: string,
  { pitch = 50, wordsPerMinute = 160, voice = 'en' } = {},
): Promise<Uint8Array> {
  const proc = Bun.spawn(
    ['espeak-ng', '-v', voice, '-p', String(pitch), '-s', String(wordsPerMinute), '--stdout', text],
    {
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  const [bytes, stderr, code] = await Promise.all([
    new Response(proc.stdout).arrayBuffer(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`espeak-ng exited ${code}: ${stderr}`);
  return new Uint8Array(bytes);
}
