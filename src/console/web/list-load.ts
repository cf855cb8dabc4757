// How a page loads its list, as it opens and after each change: GET it, render only the newest
// answer (newest-answer.ts says why), and show a failure where the list's errors go.
import { api } from './api.ts';
import { clearError, showError } from './forms.ts';
import { newestAnswer } from './newest-answer.ts';

/** The load of the list at `path`: its newest answer goes to `render`; a failure to `errorBox`. */
export function listLoad<Answer>(
  path: string,
  errorBox: HTMLElement,
  render: (answer: Answer) => void,
): () => Promise<void> {
  const ask = newestAnswer();
  return async () => {
    const newest = ask();
    try {
      const answer = await api.get<Answer>(path);
      if (!newest()) return;
      clearError(errorBox);
      render(answer);
    } catch (error) {
      showError(errorBox, error);
    }
  };
}
