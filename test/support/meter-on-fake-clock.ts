// The streaming meter's usual bench in one call: a fake clock, a reporter on it that records
// every delivery (and answers as `answer` says), and a meter on both.
import type { ReportOutcome, StreamingMeterOptions } from '../../agent/reports/index.ts';
import type { MeterReport } from '../../src/contract/index.ts';
import { FakeClock, fakeReporter, meterWith } from './streaming-meter.ts';

export function meterOnFakeClock(
  answer?: (report: MeterReport, attempt: number) => ReportOutcome | Error,
  options: Partial<StreamingMeterOptions> = {},
) {
  const clock = new FakeClock();
  const { reporter, attempts } = fakeReporter(clock, answer);
  return { clock, reporter, attempts, meter: meterWith(clock, reporter, options) };
}
