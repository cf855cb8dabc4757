// Median fundamental frequency of speech, by autocorrelation over the voiced (loud,
// periodic) 40 ms frames: enough to tell a low voice from a high one.
export function medianPitchHz(samples: Int16Array, sampleRate: number): number {
  const size = Math.round(0.04 * sampleRate);
  const hop = size >> 1;
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 60);
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const pitches: number[] = [];
  const frame = new Float64Array(size);
  for (let start = 0; start + size <= samples.length; start += hop) {
    let mean = 0;
    for (let i = 0; i < size; i++) mean += samples[start + i]!;
    mean /= size;
    let energy = 0;
    for (let i = 0; i < size; i++) {
      frame[i] = samples[start + i]! - mean;
      energy += frame[i]! ** 2;
    }
    if (Math.sqrt(energy / size) < 0.03 * peak) continue; // silence or a pause
    let bestLag = 0;
    let best = -Infinity;
    for (let lag = minLag; lag <= maxLag && lag < size; lag++) {
      let sum = 0;
      for (let i = 0; i + lag < size; i++) sum += frame[i]! * frame[i + lag]!;
      if (sum > best) {
        best = sum;
        bestLag = lag;
      }
    }
    if (bestLag && best > 0.4 * energy) pitches.push(sampleRate / bestLag); // periodic enough: voiced
  }
  if (pitches.length === 0) return 0;
  pitches.sort((a, b) => a - b);
  return pitches[pitches.length >> 1]!;
}
