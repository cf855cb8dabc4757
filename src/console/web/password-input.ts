// The console's password boxes: signing in, creating an account, changing the password. The
// length a new one needs is the server's (MIN_PASSWORD_LENGTH, src/console/passwords.ts),
// repeated here for the browser to say before it asks.
import { h } from './dom.ts';

export const PASSWORD_MIN = 10;

/** A password box; a new password's also asks for PASSWORD_MIN characters. */
export function passwordInput(
  id: string,
  name: string,
  autocomplete: 'current-password' | 'new-password',
): HTMLInputElement {
  return h('input', {
    id,
    name,
    type: 'password',
    autocomplete,
    required: true,
    minlength: autocomplete === 'new-password' ? PASSWORD_MIN : null,
  });
}
