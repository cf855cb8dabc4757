// The delete (or revoke, or forget) behind a row's danger button: asked first in the confirm
// dialog, the row's buttons busy while it runs, a failure shown where the list's errors go.
import { api } from './api.ts';
import { confirmAction } from './confirm-dialog.ts';
import { showError, whileBusy } from './forms.ts';

export interface ConfirmedDelete {
  /** The dialog's question, and its button ('Delete tool'). */
  question: string;
  action: string;
  /** What is DELETEd. */
  path: string;
  /** Disabled while it runs (the button itself among them); `busyLabel` shows on them meanwhile. */
  busy: HTMLButtonElement[];
  busyLabel?: string;
  errorBox: HTMLElement;
  /** Once deleted: reload the list, let go of what showed the thing. */
  done: () => unknown;
}

/** Runs `spec` when `button` is clicked and the dialog is accepted. */
export function onConfirmedDelete(button: HTMLButtonElement, spec: ConfirmedDelete): void {
  button.addEventListener('click', async () => {
    if (!(await confirmAction(spec.question, spec.action))) return;
    try {
      await whileBusy(spec.busy, spec.busyLabel ?? 'Deleting…', () => api.delete(spec.path));
      await spec.done();
    } catch (error) {
      showError(spec.errorBox, error);
    }
  });
}
