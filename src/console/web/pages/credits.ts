// Credits: the balance, a chart of the last 30 days' usage, and every ledger entry that made it.
import { api } from '../api.ts';
import { h } from '../dom.ts';
import { formatCredits, formatDate, formatSignedAmount } from '../format.ts';
import { errorBox, showError } from '../forms.ts';
import type { Credits, LedgerKind, Usage } from '../resources.ts';
import { cell, dataTable } from '../table.ts';
import { usageChart } from '../usage-chart.ts';
import { type Page, pageHeading } from './page.ts';

export const LEDGER_KIND_NAMES: Record<LedgerKind, string> = {
  grant: 'Starter grant',
  onboarding: 'Identity onboarding',
  session_minute: 'Session minute',
  recorded_minute: 'Recorded minute',
  session_hold: 'Session hold',
  session_release: 'Hold released',
  adjustment: 'Adjustment',
};

export const creditsPage: Page = async (context) => {
  const error = errorBox('credits-error');
  context.root.append(pageHeading('Credits'), error);
  try {
    const [credits, usage] = await Promise.all([
      api.get<Credits>('/console/api/credits'),
      api.get<Usage>('/console/api/usage'),
    ]);
    const chart = usageChart(usage);
    const rows = credits.entries.map((entry) =>
      h(
        'tr',
        { 'data-entry-id': entry.entry_id },
        cell('Date', formatDate(entry.created_at)),
        cell('Kind', LEDGER_KIND_NAMES[entry.kind] ?? entry.kind),
        cell(
          'Amount',
          h(
            'span',
            { class: entry.amount < 0 ? 'amount negative' : 'amount positive' },
            formatSignedAmount(entry.amount),
          ),
        ),
        cell('Reference', h('code', { class: 'reference' }, entry.reference)),
      ),
    );
    context.root.append(
      h(
        'p',
        { class: 'balance-large' },
        'Balance: ',
        h('strong', { id: 'credits-balance' }, formatCredits(credits.balance)),
      ),
      h(
        'p',
        { class: 'muted' },
        'Creating an identity costs a one-time onboarding charge; a session is charged per minute while the avatar streams. Starting a session holds one minute’s worth of credits; the hold is released once minutes are charged or the session ends.',
      ),
      h('h2', null, 'Usage'),
      chart.element,
      h('h2', null, 'Ledger'),
      rows.length
        ? dataTable('ledger-table', 'Credit ledger, newest first', ['Date', 'Kind', 'Amount', 'Reference'], rows)
        : h('p', { class: 'muted' }, 'No entries yet.'),
    );
    chart.draw();
  } catch (caught) {
    showError(error, caught);
  }
};
