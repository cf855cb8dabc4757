// Sign in, or create an account (which shows its first API key once before going on); with
// sign-up turned off (SIGNUP=off) sign in only, and say who makes accounts.
import { ApiError, api, tryAgainIn } from '../api.ts';
import { h } from '../dom.ts';
import { errorBox, field, onSubmit, showError, whileBusy } from '../forms.ts';
import { PASSWORD_MIN, passwordInput } from '../password-input.ts';
import type { NewApiKey, SignedIn } from '../resources.ts';
import { apiKeyOnce } from '../secret-once.ts';
import { type Page, pageHeading } from './page.ts';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const signInPage: Page = (context) => {
  const email = h('input', {
    id: 'email',
    name: 'email',
    type: 'email',
    autocomplete: 'email',
    required: true,
    inputmode: 'email',
  });
  const password = passwordInput('password', 'password', 'current-password');
  const signIn = h('button', { type: 'submit', id: 'sign-in', value: 'sign-in' }, 'Sign in');
  const signUp = h('button', { type: 'submit', id: 'sign-up', value: 'sign-up', class: 'secondary' }, 'Create account');
  const error = errorBox('sign-in-error');
  const form = h(
    'form',
    { id: 'sign-in-form', class: 'card narrow' },
    field('Email', email),
    field(
      'Password',
      password,
      context.signUpOpen ? `New accounts need at least ${PASSWORD_MIN} characters.` : undefined,
    ),
    error,
    h('div', { class: 'actions' }, ...(context.signUpOpen ? [signIn, signUp] : [signIn])),
  );

  const heading = pageHeading('Sign in to Likeness');
  const lead = h(
    'p',
    { class: 'lead', id: 'sign-in-lead' },
    context.signUpOpen
      ? 'Create and talk to your digital humans. New here? Enter an email and a password and choose “Create account”.'
      : 'Create and talk to your digital humans. New here? Accounts on this service are made by its operator: ask them for one.',
  );
  const creatingIn = (event: SubmitEvent) => event.submitter === signUp;
  onSubmit(
    form,
    error,
    async (event) => {
      const creating = creatingIn(event);
      if (creating && password.value.length < PASSWORD_MIN) {
        showError(error, `Choose a password of at least ${PASSWORD_MIN} characters.`);
        password.focus();
        return;
      }
      const credentials = { email: email.value.trim(), password: password.value };
      await whileBusy(
        creating ? [signUp, signIn] : [signIn, signUp],
        creating ? 'Creating…' : 'Signing in…',
        async () => {
          if (creating) {
            const created = await api.post<SignedIn & { api_key: NewApiKey }>('/console/api/sign-up', credentials, {
              expectUnauthorized: true,
            });
            password.value = '';
            context.signedIn(created);
            // Signed in, so on to the console (the URL says where); its first page shows the key
            // once above itself, and continuing wipes it.
            const welcome = h('section', { class: 'welcome', 'aria-label': 'Welcome' });
            welcome.append(
              h(
                'p',
                { class: 'lead' },
                'Welcome to Likeness: your account is ready, with starter credits to create identities and talk to them.',
              ),
              apiKeyOnce(created.api_key.api_key, {
                continueLabel: 'Continue to the console',
                onContinue: () => {
                  welcome.remove();
                  document.querySelector<HTMLElement>('#page h1')?.focus();
                },
              }),
            );
            context.carryOver(welcome);
            context.navigate(context.homeHash());
          } else {
            const signedIn = await api.post<SignedIn>('/console/api/sign-in', credentials, {
              expectUnauthorized: true,
            });
            password.value = '';
            context.signedIn(signedIn);
            context.navigate(context.homeHash());
          }
        },
      );
    },
    (caught, event) => explain(caught, creatingIn(event)),
  );

  context.root.append(heading, lead, form);
  email.focus();
};

function explain(error: unknown, creating: boolean): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 401) return 'Wrong email or password.';
  if (error.status === 409 && creating) return 'That email already has an account. Sign in instead.';
  if (error.status === 429)
    return `Too many attempts, so signing in is paused. ${error.retryAfterSeconds ? tryAgainIn(error.retryAfterSeconds) : 'Wait a little and try again.'}`;
  return error;
}
