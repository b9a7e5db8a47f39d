import type { ChannelTelemetry } from '../core/telemetry';
import { NO_CHANNEL_TELEMETRY } from '../core/telemetry';
import { SpanKind, type Tracing } from '../tracing/tracing';
import type { HubMetrics } from './hub-metrics';
import type { TurnArrivals } from './turn-arrivals';

/**
 * What one channel reports, turned into metrics and the `deliver` span of a turn's trace. With
 * neither metrics nor traces on, the channel gets the no-op telemetry and pays nothing.
 */
export function channelTelemetry(channel: string, metrics: HubMetrics | null, tracing: Tracing | null, arrivals: TurnArrivals): ChannelTelemetry {
  if (!metrics && !tracing) return NO_CHANNEL_TELEMETRY;
  return {
    platformCall: (method, status, seconds) => metrics?.platformCall(channel, method, status, seconds),
    answerDelivered: (turnId, frameTs) => {
      const now = Date.now();
      const emittedAt = Date.parse(frameTs);
      metrics?.stage('delivered', channel, (now - emittedAt) / 1000);
      const arrival = arrivals.take(turnId);
      if (!arrival) return;
      metrics?.firstAnswerDelivered(channel, (performance.now() - arrival.receivedMark) / 1000);
      if (tracing && arrival.trace) {
        // From the frame's emission to its delivery, under the turn's `ingest` span.
        const span = tracing.startSpan(
          `deliver ${channel}`,
          { kind: SpanKind.PRODUCER, startTime: Math.min(emittedAt, now), attributes: { 'switchboard.channel': channel, 'switchboard.turn_id': turnId } },
          arrival.trace,
        );
        span.end(now);
      }
    },
    socketOpened: () => metrics?.socketOpened(channel),
    socketClosed: () => metrics?.socketClosed(channel),
    framesSent: (count) => metrics?.framesWritten(channel, count),
    frameReceived: (type) => metrics?.frameReceived(channel, type),
  };
}
