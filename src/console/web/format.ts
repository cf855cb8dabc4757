// How times, durations and credit amounts read in the console.

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatCredits(amount: number): string {
  return `${amount.toLocaleString()} credit${Math.abs(amount) === 1 ? '' : 's'}`;
}

/** `+100` / `−5`: a true minus sign reads better than a hyphen next to digits. */
export function formatSignedAmount(amount: number): string {
  if (amount > 0) return `+${amount.toLocaleString()}`;
  if (amount < 0) return `\u2212${Math.abs(amount).toLocaleString()}`;
  return '0';
}

export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const minutes = Math.floor(whole / 60);
  const rest = whole % 60;
  if (minutes === 0) return `${rest} s`;
  return `${minutes} min ${String(rest).padStart(2, '0')} s`;
}
