// A logger for the agent's parts (agent/logging.ts) that keeps what they log: each line as its
// level, its message and its fields, a child's fields included.
import type { AgentLogger, LogFn } from '../../agent/logging.ts';

export type LoggedLine = { level: string; msg: string } & Record<string, unknown>;

export interface RecordingLogger extends AgentLogger {
  /** Every line logged so far, through this logger or its children. */
  readonly lines: LoggedLine[];
}

export function recordingLogger(lines: LoggedLine[] = [], bound: object = {}): RecordingLogger {
  const at =
    (level: string): LogFn =>
    (fieldsOrMessage: object | string, message?: string) => {
      const fields = typeof fieldsOrMessage === 'string' ? {} : fieldsOrMessage;
      const msg = typeof fieldsOrMessage === 'string' ? fieldsOrMessage : (message ?? '');
      lines.push({ ...bound, ...fields, level, msg });
    };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => recordingLogger(lines, { ...bound, ...fields }),
  };
}
