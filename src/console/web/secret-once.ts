// A secret shown exactly once (a new API key, a webhook's signing secret): it lives only in
// this box's DOM, never in storage or the URL, and is wiped when the person continues.
import { h } from './dom.ts';

export interface SecretOnceOptions {
  /** Ids of the secret's text and of the button that dismisses the box (tests find them). */
  ids: { text: string; copy?: string; proceed: string; title: string };
  title: string;
  explanation: string;
  /** What the copy hint calls it: "key", "secret". */
  noun: string;
  continueLabel: string;
  onContinue?: () => void;
  testId?: string;
}

/** A secret shown once, with Copy and a button that wipes it. */
export function secretOnce(secret: string, options: SecretOnceOptions): HTMLElement {
  const { ids } = options;
  const secretText = h('code', { id: ids.text, class: 'secret' }, secret);
  const copyStatus = h('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', id: ids.copy ?? null, class: 'secondary' }, 'Copy');
  const proceed = h('button', { type: 'button', id: ids.proceed }, options.continueLabel);
  const box = h(
    'section',
    { class: 'key-once', 'aria-labelledby': ids.title, 'data-testid': options.testId ?? null },
    h('h2', { id: ids.title }, options.title),
    h('p', null, options.explanation),
    secretText,
    h('div', { class: 'actions' }, copy, proceed, copyStatus),
  );
  copy.addEventListener('click', async () => {
    copyStatus.textContent = (await copyText(secretText))
      ? 'Copied.'
      : `Select the ${options.noun} and copy it by hand.`;
  });
  proceed.addEventListener('click', () => {
    secretText.textContent = '';
    box.remove();
    options.onContinue?.();
  });
  queueMicrotask(() => copy.focus());
  return box;
}

export function apiKeyOnce(apiKey: string, options: { continueLabel: string; onContinue: () => void }): HTMLElement {
  return secretOnce(apiKey, {
    ids: { text: 'api-key-once', copy: 'copy-api-key', proceed: 'continue', title: 'key-once-title' },
    testId: 'api-key-once-box',
    title: 'Your new API key — shown once, copy it now',
    explanation:
      'Store it somewhere safe, on your server only. It will not be shown again; if it is lost, create a new key and revoke this one.',
    noun: 'key',
    ...options,
  });
}

/** The Clipboard API needs a secure context; plain-http deployments fall back to selection. */
async function copyText(element: HTMLElement): Promise<boolean> {
  const text = element.textContent ?? '';
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const selection = window.getSelection();
    const range = document.createRange();
    range.selectNodeContents(element);
    selection?.removeAllRanges();
    selection?.addRange(range);
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}
