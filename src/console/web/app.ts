// The console's shell: who is signed in, the top bar and hash routing to the pages.
//
// Element ids and test hooks (kept stable for the browser tests):
//   shell:       #top-bar #console-nav #account-email (a link to #/account) #account-balance #sign-out #page #boot-error
//   account:     #account-page-email #password-form #current-password #new-password #change-password
//                #password-form-error #password-changed
//   sign-in:     #sign-in-form #sign-in-lead #email #password #sign-in #sign-up (none with SIGNUP=off) #sign-in-error
//                (after sign-up, the key once is carried over to the next page in section.welcome)
//   key once:    #api-key-once (the key text) #copy-api-key #continue, [data-testid=api-key-once-box]
//   confirm:     #confirm-dialog #confirm-message #confirm-accept #confirm-cancel
//   keys:        #key-form #key-name #key-test #create-key #key-form-error #new-key-slot #keys-error #keys-list #keys-table
//                rows tr[data-key-id][data-test]; [data-testid=rename-key] [data-testid=revoke-key]
//                [data-testid=rename-key-form] [data-testid=rename-key-input] [data-testid=test-key-badge]
//                #api-key-once-test (a new test key's note in the key-once box)
//   embed:       #publishable-key-form (create; the editor: #edit-publishable-key-form, prefix edit-publishable-key)
//                  #<prefix>-name #<prefix>-origins #<prefix>-identities (checkboxes #<prefix>-identity-<identity_id>)
//                  #<prefix>-<limit with - for _> #create-publishable-key #publishable-key-form-error
//                  #save-publishable-key #cancel-publishable-key-edit #edit-publishable-key-form-error
//                #publishable-keys-error #publishable-keys-list #publishable-keys-table (rows
//                tr[data-publishable-key-id][data-revoked]) [data-testid=publishable-key|edit-publishable-key|
//                revoke-publishable-key] #publishable-key-snippets section[data-testid=snippet][data-publishable-key-id]
//                  [data-testid=element-snippet|iframe-snippet|copy-snippet] #snippet-identity-<publishable_key_id>
//   credits:     #credits-balance #credits-error #ledger-table (rows tr[data-entry-id])
//   webhooks:    #webhook-form #webhook-url #webhook-description #webhook-event-<event with - for .> #add-webhook
//                #webhook-form-error #webhook-secret-slot #webhook-secret-once #webhook-secret-done #webhooks-error
//                #webhooks-list #webhooks-table (rows tr[data-webhook-id]) [data-testid=test-webhook|show-deliveries|
//                toggle-webhook|delete-webhook] #webhook-deliveries #deliveries-table (rows tr[data-delivery-id][data-status])
//                #threshold-form #low-balance-threshold #save-threshold #threshold-status #threshold-error
//   identities:  #identity-gallery #identities-empty #identities-error #identities-status
//                cards li[data-testid=identity-card][data-identity-id][data-status]
//                  [data-testid=identity-status] [data-testid=identity-attachments] [data-testid=talk-identity]
//                  [data-testid=edit-identity] [data-testid=delete-identity]
//                #identity-form #identity-name #identity-prompt #identity-image #identity-audio #identity-voice
//                #identity-language #identity-language-problem #create-identity #identity-form-error #identity-form-status
//                #edit-identity-form #edit-identity-name #edit-identity-prompt #edit-identity-language #edit-identity-voice
//                #edit-identity-language-problem #edit-identity-image #edit-identity-audio #save-identity #cancel-edit
//                #edit-identity-error
//                attachments (create: identity-, edit: edit-identity-): #<prefix>-tools #<prefix>-documents (fieldsets)
//                  checkboxes #<prefix>-tool-<tool_id> (name tool_ids) #<prefix>-document-<document_id> (name document_ids)
//   tools:       #tool-form #tool-name #tool-type #tool-description #tool-parameters #tool-webhook-fields #tool-url
//                #tool-timeout #add-tool #tool-form-error #tool-secret-slot #tool-secret-once #tool-secret-done
//                #tools-error #tools-list #tools-table (rows tr[data-tool-id][data-type]) [data-testid=delete-tool]
//   knowledge:   #document-form #document-file #document-name #upload-document #document-form-error #documents-status
//                #documents-error #documents-list #documents-table (rows tr[data-document-id][data-status])
//                [data-testid=document-status|document-detail|delete-document]
//   sessions:    #sessions-table (rows tr[data-session-id]) [data-testid=view-transcript] #sessions-error #sessions-list
//                #session-transcript #session-transcript-turns
//   visitors:    #visitors-error #visitors-list #visitors-empty #more-visitors #visitors-table
//                (rows tr[data-visitor-id]) [data-testid=open-visitor] #visitor-detail #visitor-status
//                #visitor-facts (section[data-scope=<identity_id>|shared] li[data-testid=visitor-fact][data-session-id]
//                  [data-testid=fact-text])
//                #edit-visitor-facts #forget-visitor #visitor-error #visitor-facts-form #visitor-facts-rows
//                  [data-testid=fact-row] (#fact-text-<n> #fact-scope-<n> ('' shared) [data-testid=remove-fact])
//                  #add-fact #save-visitor-facts #cancel-visitor-facts #visitor-facts-error
//   talk:        #talk-form #talk-identity #talk-language #talk-language-note #talk-form-factor #talk-visual-awareness
//                #start-talk #talk-error (microphone problems too, with a link to the HTTPS address)
//                #talk-stage #connection-state[data-state] #notice[data-type] #media-error #avatar-video #avatar-audio
//                #enable-audio #mic-toggle #camera-toggle #end-session #new-session #transcript
import './app.css';
import { api, onUnauthorized, setCsrfToken } from './api.ts';
import { h, replaceChildren } from './dom.ts';
import { formatCredits } from './format.ts';
import { accountPage } from './pages/account.ts';
import { creditsPage } from './pages/credits.ts';
import { embedPage } from './pages/embed.ts';
import { identitiesPage } from './pages/identities.ts';
import { keysPage } from './pages/keys.ts';
import { knowledgePage } from './pages/knowledge.ts';
import type { Page, PageContext } from './pages/page.ts';
import { sessionsPage } from './pages/sessions.ts';
import { signInPage } from './pages/sign-in.ts';
import { talkPage } from './pages/talk.ts';
import { toolsPage } from './pages/tools.ts';
import { visitorsPage } from './pages/visitors.ts';
import { webhooksPage } from './pages/webhooks.ts';
import type { Account, SignedIn, SignInState } from './resources.ts';

interface Route {
  page: Page;
  title: string;
  /** Shown in the top navigation. */
  nav: boolean;
}

const ROUTES: Record<string, Route> = {
  '/sign-in': { page: signInPage, title: 'Sign in', nav: false },
  '/identities': { page: identitiesPage, title: 'Identities', nav: true },
  '/tools': { page: toolsPage, title: 'Tools', nav: true },
  '/knowledge': { page: knowledgePage, title: 'Knowledge', nav: true },
  '/talk': { page: talkPage, title: 'Talk', nav: true },
  '/sessions': { page: sessionsPage, title: 'Sessions', nav: true },
  '/visitors': { page: visitorsPage, title: 'Visitors', nav: true },
  '/credits': { page: creditsPage, title: 'Credits', nav: true },
  '/keys': { page: keysPage, title: 'API keys', nav: true },
  '/embed': { page: embedPage, title: 'Embed', nav: true },
  '/webhooks': { page: webhooksPage, title: 'Webhooks', nav: true },
  // Reached from the account's email in the top bar.
  '/account': { page: accountPage, title: 'Account', nav: false },
};
const HOME = '#/identities';
const SIGN_IN = '#/sign-in';

let account: Account | null = null;
/** Whether the service lets visitors create accounts (SIGNUP), as GET /signed-in says. */
let signUpOpen = true;
/** The page asked for while signed out, opened after signing in. */
let returnTo: string | null = null;
let leavePage: AbortController | null = null;
/** Put at the top of the next page rendered (PageContext.carryOver). */
let carried: HTMLElement | null = null;

const main = document.getElementById('page') as HTMLElement;
const email = h('a', {
  id: 'account-email',
  class: 'account-email',
  href: '#/account',
  title: 'Your account and password',
});
const balance = h('a', { id: 'account-balance', class: 'balance', href: '#/credits' });
const signOut = h('button', { type: 'button', id: 'sign-out', class: 'secondary small' }, 'Sign out');
const navLinks = Object.entries(ROUTES)
  .filter(([, route]) => route.nav)
  .map(([path, route]) => h('li', null, h('a', { href: `#${path}`, 'data-path': path }, route.title)));
const topBar = h(
  'header',
  { id: 'top-bar', class: 'top-bar', hidden: true },
  h('a', { class: 'brand', href: HOME }, 'Likeness'),
  h('nav', { id: 'console-nav', 'aria-label': 'Console' }, h('ul', null, ...navLinks)),
  h('div', { class: 'account' }, email, balance, signOut),
);
main.before(topBar);
// The skip link must not touch the hash: the hash is the route.
document.querySelector('.skip-link')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

function showAccount(next: Account | null): void {
  account = next;
  topBar.hidden = !next;
  email.textContent = next?.email ?? '';
  balance.textContent = next ? formatCredits(next.balance) : '';
  balance.setAttribute('aria-label', next ? `Balance: ${formatCredits(next.balance)}` : '');
}

function signedIn(result: SignedIn): void {
  setCsrfToken(result.csrf_token);
  showAccount(result.account);
}

async function refreshAccount(): Promise<void> {
  try {
    signedIn(await api.get<SignedIn>('/console/api/me'));
  } catch {
    // the balance stays as it was; a 401 is handled by onUnauthorized
  }
}

function parseHash(): { path: string; query: URLSearchParams } {
  const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?', 2);
  return { path, query: new URLSearchParams(query) };
}

function navigate(hash: string): void {
  if (location.hash === hash) void route();
  else location.hash = hash;
}

async function route(moveFocus = true): Promise<void> {
  if (location.hash && !location.hash.startsWith('#/')) {
    // An in-page anchor, not a route; on a first load there is no page yet, so go home.
    if (!leavePage) navigate(HOME);
    return;
  }
  leavePage?.abort();
  const { path, query } = parseHash();
  if (!account && path !== '/sign-in') {
    if (ROUTES[path]) returnTo = location.hash;
    return navigate(SIGN_IN);
  }
  if (account && path === '/sign-in') return navigate(HOME);
  const current = ROUTES[path];
  if (!current) return navigate(HOME);

  const controller = new AbortController();
  leavePage = controller;
  document.title = `${current.title} · Likeness console`;
  topBar.querySelectorAll<HTMLAnchorElement>('nav a').forEach((link) => {
    if (link.dataset.path === path) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  });
  // Each visit renders into a fresh container, so a slow page that finishes after the person
  // moved on writes into a detached element instead of over the new page.
  const root = h('div', { class: `page page-${path.slice(1)}` });
  replaceChildren(main, root);
  const arrived = carried;
  carried = null;
  if (arrived) root.append(arrived);
  const context: PageContext = {
    root,
    query,
    signal: controller.signal,
    account,
    signUpOpen,
    signedIn,
    refreshAccount,
    navigate,
    homeHash: () => {
      const target = returnTo ?? HOME;
      returnTo = null;
      return target;
    },
    carryOver: (element) => (carried = element),
  };
  try {
    await current.page(context);
  } catch (error) {
    if (!controller.signal.aborted)
      root.append(h('p', { class: 'error', role: 'alert' }, error instanceof Error ? error.message : String(error)));
  }
  // Screen readers hear the new page's title, unless the page put the focus somewhere itself
  // (or something carried over to it asks for attention first).
  if (moveFocus && !controller.signal.aborted && !root.contains(document.activeElement)) {
    (arrived?.querySelector<HTMLElement>('button') ?? root.querySelector<HTMLElement>('h1'))?.focus({
      preventScroll: true,
    });
  }
}

onUnauthorized(() => {
  if (!account) return;
  setCsrfToken(null);
  showAccount(null);
  returnTo = location.hash;
  navigate(SIGN_IN);
});

signOut.addEventListener('click', async () => {
  try {
    await api.post('/console/api/sign-out');
  } catch {
    // signed out already or the server is away: forget the account here either way
  }
  setCsrfToken(null);
  showAccount(null);
  returnTo = null;
  navigate(SIGN_IN);
});

async function start(): Promise<void> {
  try {
    // Answers 200 signed in or not: a 401 here would be logged in the browser's console.
    const state = await api.get<SignInState>('/console/api/signed-in');
    signUpOpen = state.sign_up;
    if (state.account && state.csrf_token) signedIn({ account: state.account, csrf_token: state.csrf_token });
  } catch (error) {
    const retry = h('button', { type: 'button', onclick: () => location.reload() }, 'Try again');
    replaceChildren(
      main,
      h(
        'div',
        { id: 'boot-error', class: 'card narrow', role: 'alert' },
        h('p', null, `The console could not load: ${error instanceof Error ? error.message : String(error)}`),
        retry,
      ),
    );
    return;
  }
  window.addEventListener('hashchange', () => void route());
  await route(false);
}

void start();
