// The account: who is signed in, a new console password (every other browser signed in to the
// account is signed out; this one stays), and where its recordings go (recording-storage.ts).
import { api } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import { clearError, clearFieldProblems, errorBox, field, showError, showFieldProblems, whileBusy } from '../forms.ts';
import type { SignedIn } from '../resources.ts';
import { type Page, pageHeading } from './page.ts';
import { recordingStorageCard } from './recording-storage.ts';

const PASSWORD_MIN = 10;

export const accountPage: Page = (context) => {
  const current = h('input', {
    id: 'current-password',
    name: 'current_password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const next = h('input', {
    id: 'new-password',
    name: 'new_password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: PASSWORD_MIN,
  });
  const save = h('button', { type: 'submit', id: 'change-password' }, 'Change password');
  const error = errorBox('password-form-error');
  const changed = h('p', { id: 'password-changed', class: 'muted', role: 'status', 'aria-live': 'polite' });
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
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(error);
    clearFieldProblems(form);
    changed.textContent = '';
    try {
      const result = await whileBusy([save], 'Changing…', () =>
        api.post<SignedIn>('/console/api/password', { current_password: current.value, new_password: next.value }),
      );
      // A new browser session: its CSRF token replaces the old one.
      context.signedIn(result);
      form.reset();
      changed.textContent = 'Password changed. Other browsers were signed out.';
    } catch (failure) {
      showFieldProblems(form, failure);
      showError(error, failure);
    }
  });
  replaceChildren(
    context.root,
    pageHeading('Account'),
    h('p', { class: 'lead' }, 'Signed in as ', h('strong', { id: 'account-page-email' }, context.account?.email ?? '')),
    form,
    recordingStorageCard(),
  );
};
