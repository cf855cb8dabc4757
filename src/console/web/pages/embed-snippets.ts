// The snippets of a publishable key on the console's Embed page (embed.ts): the
// <likeness-avatar> element and the iframe, for one of its identities at a time, each copyable.
import { h } from '../dom.ts';
import { field } from '../forms.ts';
import type { PublishableKey } from '../resources.ts';

/** The two ways to put a live key on a page, for one of its identities at a time. */
export function snippetCard(key: PublishableKey, identityName: (id: string) => string | undefined): HTMLElement {
  const origin = location.origin;
  const choice = h(
    'select',
    { id: `snippet-identity-${key.publishable_key_id}` },
    ...key.identity_ids.map((id) => h('option', { value: id }, identityName(id) ?? id)),
  );
  const element = h('code', { 'data-testid': 'element-snippet' });
  const frame = h('code', { 'data-testid': 'iframe-snippet' });
  const show = () => {
    const identity = choice.value;
    const title = `Talk with ${identityName(identity) ?? 'our assistant'}`;
    element.textContent = [
      `<script src="${origin}/embed.js" async></script>`,
      `<likeness-avatar publishable-key="${attribute(key.publishable_key)}" identity="${attribute(identity)}"></likeness-avatar>`,
    ].join('\n');
    // Both values are URL-encoded, so the src needs no HTML escaping (a bare & before a name and = is not a reference).
    const src = `${origin}/embed/frame?key=${encodeURIComponent(key.publishable_key)}&identity=${encodeURIComponent(identity)}`;
    frame.textContent = `<iframe src="${src}" allow="microphone; camera; autoplay" width="400" height="640" style="border: 0" title="${attribute(title)}"></iframe>`;
  };
  choice.addEventListener('change', show);
  show();
  return h(
    'section',
    { class: 'card snippet-card', 'data-testid': 'snippet', 'data-publishable-key-id': key.publishable_key_id },
    h('h3', null, key.name ?? 'Unnamed key', ' ', h('code', { class: 'muted' }, key.publishable_key)),
    key.identity_ids.length > 1 ? field('Identity', choice) : null,
    h('p', null, 'The element, styled by your page (the script defines it):'),
    copyable(element),
    h('p', null, 'Or an iframe, nothing else to load:'),
    copyable(frame),
    h(
      'p',
      { class: 'hint' },
      'Either works only on pages of the key’s origins, and asks the visitor for their microphone.',
    ),
  );
}

function copyable(code: HTMLElement): HTMLElement {
  const status = h('span', { class: 'copy-status', role: 'status' });
  const copy = h('button', { type: 'button', class: 'secondary small', 'data-testid': 'copy-snippet' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(code.textContent ?? '');
      status.textContent = 'Copied.';
    } catch {
      // No clipboard (plain http): select it for a manual copy.
      getSelection()?.selectAllChildren(code);
      status.textContent = 'Selected: copy it by hand.';
    }
  });
  return h('div', { class: 'snippet' }, h('pre', null, code), h('div', { class: 'actions' }, copy, status));
}

/** A value inside a double-quoted HTML attribute. */
function attribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
