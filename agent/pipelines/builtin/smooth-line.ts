// Per-column tables smoothed along u: the mouth's parting line and where the neck's fade starts.
/**
 * A line of per-column values through a dozen landmarks (the lips' parting line, the jaw):
 * between the ends it is averaged over `radius` px each way (three passes, nearly a
 * Gaussian), so what follows it curves instead of showing straight pieces and kinks.
 */
export function smoothLine(line: Float32Array, corners: readonly [number, number], u0: number, radius = 3): void {
  const from = Math.max(0, Math.ceil(corners[0] - u0) + 1);
  const to = Math.min(line.length - 1, Math.floor(corners[1] - u0) - 1);
  const copy = new Float32Array(line.length);
  for (let pass = 0; pass < 3; pass++) {
    copy.set(line);
    for (let k = from; k <= to; k++) {
      let sum = 0;
      let n = 0;
      for (let j = Math.max(0, k - radius); j <= Math.min(line.length - 1, k + radius); j++) {
        sum += copy[j]!;
        n++;
      }
      line[k] = sum / n;
    }
  }
}
