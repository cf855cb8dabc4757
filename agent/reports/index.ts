// Everything a job reports about its session to the control plane (src/contract/job-reports.ts,
// docs/api.md#internal), and how it gets there. Billing (docs/api.md#credits): the meter
// (meter.ts) counts the minutes from when the visitor first receives the avatar while they are
// in, the room feed (room.ts) tells it who joined or left. Delivery (report-delivery.ts): one
// reporter per session for every report (minutes and usage, transcript turns, turn quality, an
// avatar fallback), the meter's kept in order and retried while the session runs, the others
// each tried a few times.
export { type MeterClock, systemClock } from './clock.ts';
export { DEFAULT_RETRY_DELAYS_MS, type MeterLogger, StreamingMeter, type StreamingMeterOptions } from './meter.ts';
export {
  deliver,
  type HttpReporterOptions,
  httpReporter,
  outcomeOf,
  type Reporter,
  type ReportOutcome,
  ReportSender,
} from './report-delivery.ts';
export { meterRoomParticipants } from './room.ts';
