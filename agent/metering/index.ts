// Billing for one session, as seen from its agent job (docs/api.md#credits): the meter
// (meter.ts) counts minutes from the avatar's first frame while the visitor is in, the room
// feed (room.ts) tells it who joined or left, and each report is delivered to the control
// plane with retries (report-delivery.ts).
export { type MeterClock, systemClock } from './clock.ts';
export { DEFAULT_RETRY_DELAYS_MS, type MeterLogger, StreamingMeter, type StreamingMeterOptions } from './meter.ts';
export {
  deliver,
  type HttpReporterOptions,
  httpReporter,
  outcomeOf,
  type Reporter,
  type ReportOutcome,
} from './report-delivery.ts';
export { meterRoomParticipants } from './room.ts';
