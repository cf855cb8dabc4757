// A new API key, shown exactly once: it lives only in this box's DOM, never in storage or the
// URL, and is wiped when the person continues.
import { h } from './dom.ts';

export function apiKeyOnce(apiKey: string, options: { continueLabel: string; onContinue: () => void }): HTMLElement {
  const keyText = h('code', { id: 'api-key-once', class: 'secret' }, apiKey);
  const copyStatus = h('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', id: 'copy-api-key', class: 'secondary' }, 'Copy');
  const proceed = h('button', { type: 'button', id: 'continue' }, options.continueLabel);
  const box = h(
    'section',
    { class: 'key-once', 'aria-labelledby': 'key-once-title', 'data-testid': 'api-key-once-box' },
    h('h2', { id: 'key-once-title' }, 'Your new API key — shown once, copy it now'),
    h('p', null, 'Store it somewhere safe, on your server only. It will not be shown again; if it is lost, create a new key and revoke this one.'),
    keyText,
    h('div', { class: 'actions' }, copy, proceed, copyStatus),
  );
  copy.addEventListener('click', async () => {
    copyStatus.textContent = (await copyText(keyText)) ? 'Copied.' : 'Select the key and copy it by hand.';
  });
  proceed.addEventListener('click', () => {
    keyText.textContent = '';
    box.remove();
    options.onContinue();
  });
  queueMicrotask(() => copy.focus());
  return box;
}

/** The Clipboard API needs a secure context; plain-http deployments fall back to selection. */
export async function copyText(element: HTMLElement): Promise<boolean> {
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
