// Labelled fields and error display shared by the console's forms.
import { ApiError } from './api.ts';
import { h } from './dom.ts';
import { fieldOf, problemSentence } from './problems.ts';

/** A label, its control and an optional hint the control is described by. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): HTMLDivElement {
  const hintElement = hint ? h('p', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintElement);
}

/** A checkbox with its label after it, as people expect. */
export function checkboxField(label: string, control: HTMLInputElement, hint?: string): HTMLDivElement {
  const hintElement = hint ? h('p', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  return h('div', { class: 'field field-checkbox' }, control, h('label', { for: control.id }, label), hintElement);
}

export function select(
  id: string,
  name: string,
  options: [value: string, label: string][],
  selected?: string,
): HTMLSelectElement {
  return h(
    'select',
    { id, name },
    ...options.map(([value, label]) => h('option', { value, selected: value === selected }, label)),
  );
}

/** An area for a form's error: announced when it fills, hidden while empty. */
export function errorBox(id: string): HTMLParagraphElement {
  return h('p', { id, class: 'error', role: 'alert', hidden: true });
}

/** A line where a form says how its work goes and how it went, read out as it changes. */
export function statusLine(id?: string): HTMLParagraphElement {
  return h('p', { id, class: 'muted', role: 'status', 'aria-live': 'polite' });
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return `Something went wrong: ${error instanceof Error ? error.message : String(error)}`;
}

export function showError(box: HTMLElement, error: unknown): void {
  box.textContent = typeof error === 'string' ? error : messageOf(error);
  box.hidden = false;
}

export function clearError(box: HTMLElement): void {
  box.textContent = '';
  box.hidden = true;
}

/** Puts each 422 problem next to the control it is about (matched by `name`). */
export function showFieldProblems(form: HTMLFormElement, error: unknown): void {
  clearFieldProblems(form);
  if (!(error instanceof ApiError)) return;
  for (const problem of error.problems) {
    const name = fieldOf(problem);
    const control = name ? form.querySelector<HTMLElement>(`[name="${CSS.escape(name)}"]`) : null;
    if (!control) continue;
    const note = h('p', { class: 'field-error', id: `${control.id}-error` }, problemSentence(problem));
    control.after(note);
    control.setAttribute('aria-invalid', 'true');
    control.setAttribute(
      'aria-describedby',
      [control.getAttribute('aria-describedby'), note.id].filter(Boolean).join(' '),
    );
  }
}

export function clearFieldProblems(form: HTMLFormElement): void {
  form.querySelectorAll('.field-error').forEach((note) => {
    const control = form.querySelector<HTMLElement>(`[aria-describedby~="${note.id}"]`);
    if (control) {
      control.removeAttribute('aria-invalid');
      const rest = (control.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && id !== note.id);
      if (rest.length) control.setAttribute('aria-describedby', rest.join(' '));
      else control.removeAttribute('aria-describedby');
    }
    note.remove();
  });
}

/**
 * Handles the form's submit as every console form does: the last attempt's problems cleared,
 * then `send`. What it throws shows in `errorBox` and beside the fields it names, once `explain`
 * has said it better (a problem moved to the field it is about, a status in words).
 */
export function onSubmit(
  form: HTMLFormElement,
  errorBox: HTMLElement,
  send: (event: SubmitEvent) => Promise<void>,
  explain: (caught: unknown, event: SubmitEvent) => unknown = (caught) => caught,
): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(errorBox);
    clearFieldProblems(form);
    try {
      await send(event);
    } catch (caught) {
      const problem = explain(caught, event);
      showError(errorBox, problem);
      showFieldProblems(form, problem);
    }
  });
}

/** Disables the buttons (and says why on the first) until `work` settles. */
export async function whileBusy<T>(
  buttons: HTMLButtonElement[],
  busyLabel: string,
  work: () => Promise<T>,
): Promise<T> {
  const labels = buttons.map((button) => button.textContent);
  for (const button of buttons) button.disabled = true;
  if (buttons[0]) buttons[0].textContent = busyLabel;
  try {
    return await work();
  } finally {
    buttons.forEach((button, index) => {
      button.disabled = false;
      button.textContent = labels[index] ?? '';
    });
  }
}
