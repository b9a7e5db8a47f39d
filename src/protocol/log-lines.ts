/** The admin log stream's levels (spec: DEBUG, INFO, WARNING, ERROR), lowest first. */
export const STREAM_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
export type StreamLevel = (typeof STREAM_LEVELS)[number];

/** A log line as the admin log stream (`/ws/v1/logs`) sends it: a plain object, no session envelope. */
export interface LogLine {
  type: 'log_line';
  level: StreamLevel;
  logger: string;
  message: string;
  timestamp: string;
}
