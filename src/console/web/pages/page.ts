// What every console page gets from the shell in app.ts.
import type { Account, SignedIn } from '../resources.ts';

export interface PageContext {
  /** The page's own container, already in the document and empty. */
  root: HTMLElement;
  /** The part of the hash after `?`, e.g. `identity=idn_…` in `#/talk?identity=idn_…`. */
  query: URLSearchParams;
  /** Aborted when the person leaves the page: stop timers, close rooms. */
  signal: AbortSignal;
  account: Account | null;
  /** Whether visitors may create accounts here (SIGNUP); off: the operator makes them. */
  signUpOpen: boolean;
  /** After sign-in or sign-up: remember the account and its CSRF token, show the top bar. */
  signedIn(result: SignedIn): void;
  /** Fetch GET /me again, e.g. after something spent credits. */
  refreshAccount(): Promise<void>;
  /** Go to a route such as `#/identities`. */
  navigate(hash: string): void;
  /** Where to go once signed in: the page that was asked for, or the identities. */
  homeHash(): string;
  /** Shows `element` at the top of the next page, once (a new account's key after sign-up). */
  carryOver(element: HTMLElement): void;
}

export type Page = (context: PageContext) => void | Promise<void>;

/** The page's heading, focusable so a route change can move focus to it. */
export function pageHeading(text: string): HTMLHeadingElement {
  const heading = document.createElement('h1');
  heading.tabIndex = -1;
  heading.textContent = text;
  return heading;
}
