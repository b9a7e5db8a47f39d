import type { SessionFrame } from '../../src/core/events';
import { NO_CHANNEL_TELEMETRY, type ChannelTelemetry } from '../../src/core/telemetry';

/**
 * For a chat channel that follows a turn: reports the turn's first `token` frame once, as it is
 * handed to the channel's renderer (the platform call that shows it is timed on its own, as
 * `switchboard_channel_api_call_seconds`).
 */
export function answerWatch(telemetry: ChannelTelemetry = NO_CHANNEL_TELEMETRY, turnId: string): (frame: SessionFrame) => void {
  let answered = false;
  return (frame) => {
    if (answered || frame.type !== 'token') return;
    answered = true;
    telemetry.answerDelivered(turnId, frame.ts);
  };
}
