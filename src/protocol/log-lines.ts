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

/** The log stream's keepalive: the client sends the plain text `ping`, the hub answers this. */
export interface LogStreamPong {
  type: 'pong';
}

/** What the hub sends on the log stream. */
export type LogStreamFrame = LogLine | LogStreamPong;
