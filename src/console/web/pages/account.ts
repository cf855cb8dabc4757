// The account: who is signed in, a new console password (every other browser signed in to the
// account is signed out; this one stays), and where its recordings go (recording-storage.ts).
import { api } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import { errorBox, field, onSubmit, statusLine, whileBusy } from '../forms.ts';
import { PASSWORD_MIN, passwordInput } from '../password-input.ts';
import type { SignedIn } from '../resources.ts';
import { type Page, pageHeading } from './page.ts';
import { recordingStorageCard } from './recording-storage.ts';

export const accountPage: Page = (context) => {
  const current = passwordInput('current-password', 'current_password', 'current-password');
  const next = passwordInput('new-password', 'new_password', 'new-password');
  const save = h('button', { type: 'submit', id: 'change-password' }, 'Change password');
  const error = errorBox('password-form-error');
  const changed = statusLine('password-changed');
  const form = h(
    'form',
    { id: 'password-form', class: 'card narrow' },
    h('h2', null, 'Password'),
    field('Current password', current),
    field(
      'New password',
      next,
      `At least ${PASSWORD_MIN} characters. Other browsers signed in to this account are signed out.`,
    ),
    error,
    h('div', { class: 'actions' }, save),
    changed,
  );
  onSubmit(form, error, async () => {
    changed.textContent = '';
    const result = await whileBusy([save], 'Changing…', () =>
      api.post<SignedIn>('/console/api/password', { current_password: current.value, new_password: next.value }),
    );
    // A new browser session: its CSRF token replaces the old one.
    context.signedIn(result);
    form.reset();
    changed.textContent = 'Password changed. Other browsers were signed out.';
  });
  replaceChildren(
    context.root,
    pageHeading('Account'),
    h('p', { class: 'lead' }, 'Signed in as ', h('strong', { id: 'account-page-email' }, context.account?.email ?? '')),
    form,
    recordingStorageCard(),
  );
};
