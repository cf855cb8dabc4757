// Prefixed random identifiers (`idn_…`, `acc_…`): unguessable, sortable by nothing,
// and readable in logs. 16 random bytes → 22 base62 characters.
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function base62(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) {
    // 248 = 62 * 4: rejecting bytes above it keeps every character equally likely.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) out += base62(crypto.getRandomValues(new Uint8Array(length * 2)));
  return out.slice(0, length);
}

export function newId(
  prefix: 'acc' | 'key' | 'pbk' | 'idn' | 'led' | 'req' | 'ses' | 'cs' | 'whk' | 'msg' | 'dlv' | 'ord' | 'tool' | 'doc',
): string {
  return `${prefix}_${randomBase62(22)}`;
}
