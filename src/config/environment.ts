// Reading typed values from the environment: each refuses a malformed value at start, naming
// the variable. The configuration (src/config.ts and src/config/agent.ts) is made of these.

export type Env = Record<string, string | undefined>;

export function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

/** A comma-separated list; blanks dropped. */
export function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

export function oneOfValues<const T extends readonly string[]>(
  env: Env,
  name: string,
  values: T,
  fallback: T[number],
): T[number] {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!values.includes(raw)) throw new Error(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T[number];
}

export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name]}"`);
}

/** `start-end`, two ports, start ≤ end. */
export function portRange(env: Env, name: string): { start: number; end: number } | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const match = /^(\d+)\s*-\s*(\d+)$/.exec(raw);
  const [start, end] = match ? [Number(match[1]), Number(match[2])] : [NaN, NaN];
  if (!(start >= 1024 && end <= 65535 && start <= end))
    throw new Error(`${name} must be a range of ports like 50000-50099 (1024–65535), got "${raw}"`);
  return { start, end };
}

export function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
