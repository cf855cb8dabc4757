// A modal "are you sure?" for destructive actions: a native <dialog> traps focus, closes on
// Escape and returns focus to the button that opened it.
import { h } from './dom.ts';

export function confirmAction(message: string, actionLabel: string): Promise<boolean> {
  const opener = document.activeElement as HTMLElement | null;
  const cancel = h('button', { type: 'button', id: 'confirm-cancel', class: 'secondary' }, 'Cancel');
  const accept = h('button', { type: 'button', id: 'confirm-accept', class: 'danger' }, actionLabel);
  const dialog = h(
    'dialog',
    { id: 'confirm-dialog', 'aria-labelledby': 'confirm-message' },
    h('p', { id: 'confirm-message' }, message),
    h('div', { class: 'actions' }, cancel, accept),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    let accepted = false;
    accept.addEventListener('click', () => {
      accepted = true;
      dialog.close();
    });
    cancel.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      opener?.focus();
      resolve(accepted);
    });
    dialog.showModal();
    cancel.focus(); // the safe choice gets the focus
  });
}
