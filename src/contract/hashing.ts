// The one SHA-256 of the service: secrets with full entropy (API keys, browser-session and
// report tokens) are stored as this hash, and keys counted or compared without keeping them
// (a sign-in's email, a visitor's address) are reduced to it. Hex, lower case.
import { createHash } from 'node:crypto';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
