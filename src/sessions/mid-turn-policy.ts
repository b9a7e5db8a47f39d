import type { ChannelName } from '../core/inbound';
import { MID_TURN_POLICIES, type MidTurnPolicy } from '../core/turns';

/** A channel's default policy (config `channels.<name>.mid_turn`). */
export type ChannelPolicyDefault = (channel: ChannelName) => MidTurnPolicy;

/**
 * The mid-turn policy of a session: on the web channel always `reject` (the spec's
 * TURN_IN_PROGRESS); on a chat channel its current workflow's `mid_turn`, else the channel's default.
 */
export function midTurnPolicy(channel: string, workflow: { mid_turn: string | null } | null, channelDefault: ChannelPolicyDefault): MidTurnPolicy {
  if (channel === 'web') return 'reject';
  const own = workflow?.mid_turn;
  if (own && (MID_TURN_POLICIES as readonly string[]).includes(own)) return own as MidTurnPolicy;
  return channelDefault(channel as ChannelName);
}
