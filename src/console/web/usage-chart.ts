// The Credits page's chart of the last 30 days (GET /console/api/usage), drawn with uPlot:
// avatar minutes per day as bars, credits spent per day as a line on its own axis.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.ts';
import type { Usage } from './resources.ts';

const HEIGHT = 220;

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A figure holding the chart (drawn once it is in the page: uPlot measures its box) and a one-line summary. */
export function usageChart(usage: Usage): { element: HTMLElement; draw(): void } {
  const { totals, buckets } = usage;
  const spent = (b: Usage['totals']) =>
    b.credits_spent.onboarding + b.credits_spent.session_minute + (b.credits_spent.recorded_minute ?? 0);
  const plot = h('div', {
    id: 'usage-chart',
    'data-days': buckets.length,
    'data-avatar-minutes': totals.avatar_minutes,
    'data-credits-spent': spent(totals),
  });
  const element = h(
    'figure',
    { class: 'usage' },
    plot,
    h(
      'figcaption',
      { id: 'usage-summary', class: 'muted' },
      `Last ${buckets.length} days: ${count(totals.sessions, 'session')}, ${count(totals.avatar_minutes, 'avatar minute')}, ${count(totals.identities, 'identity', 'identities')}, ${count(spent(totals), 'credit')} spent.`,
    ),
  );
  const days = buckets.map((b) => Date.parse(b.start) / 1000);
  const data: uPlot.AlignedData = [days, buckets.map((b) => b.avatar_minutes), buckets.map(spent)];
  // Half a bucket of room at each end: the first and last bars (today's) are drawn whole.
  const halfBucket = (days.length > 1 ? days[1]! - days[0]! : 86_400) / 2;
  return {
    element,
    draw() {
      const width = Math.max(320, plot.clientWidth || 640);
      // On a phone the axis titles would take half the width: the legend names the series anyway.
      const titled = width >= 520;
      new uPlot(
        {
          width,
          height: HEIGHT,
          scales: {
            x: { time: true, range: (_u, min, max) => [min - halfBucket, max + halfBucket] },
            minutes: { range: (_u, _min, max) => [0, Math.max(1, max)] },
            credits: { range: (_u, _min, max) => [0, Math.max(1, max)] },
          },
          axes: [
            {},
            { scale: 'minutes', ...(titled ? { label: 'avatar minutes' } : {}) },
            { scale: 'credits', side: 1, ...(titled ? { label: 'credits spent' } : {}), grid: { show: false } },
          ],
          series: [
            {},
            {
              label: 'Avatar minutes',
              scale: 'minutes',
              stroke: '#2f6fde',
              fill: 'rgba(47, 111, 222, 0.35)',
              paths: uPlot.paths.bars!({ size: [0.6, 40] }),
            },
            { label: 'Credits spent', scale: 'credits', stroke: '#d9822b', width: 2 },
          ],
        },
        data,
        plot,
      );
    },
  };
}
