import { WEB_CHANNEL } from '../core/channel';
import type { ChannelName } from '../core/inbound';
import { MID_TURN_POLICIES, type MidTurnPolicy, type TurnRegistry } from '../core/turns';
import type { TurnStore } from '../db/turn-store';

/** A channel's default policy (config `channels.<name>.mid_turn`). */
export type ChannelPolicyDefault = (channel: ChannelName) => MidTurnPolicy;

/**
 * Each channel's default from its config section's `mid_turn` (chat channels declare it); a channel
 * without one (the web channel) keeps the spec's `reject`.
 */
export function channelMidTurnDefaults(sections: Readonly<Record<string, unknown>>): ChannelPolicyDefault {
  return (channel) => {
    const own = (sections[channel] as { mid_turn?: unknown } | undefined)?.mid_turn;
    return typeof own === 'string' && (MID_TURN_POLICIES as readonly string[]).includes(own) ? (own as MidTurnPolicy) : 'reject';
  };
}

/**
 * The mid-turn policy of a session: on the web channel always `reject` (the spec's
 * TURN_IN_PROGRESS); on a chat channel its current workflow's `mid_turn`, else the channel's default.
 */
export function midTurnPolicy(channel: string, workflow: { mid_turn: string | null } | null, channelDefault: ChannelPolicyDefault): MidTurnPolicy {
  if (channel === WEB_CHANNEL) return 'reject';
  const own = workflow?.mid_turn;
  if (own && (MID_TURN_POLICIES as readonly string[]).includes(own)) return own as MidTurnPolicy;
  return channelDefault(channel as ChannelName);
}

/**
 * The policy for a message into a busy chat session: the running turn's workflow decides (it may
 * have just routed elsewhere: the registry says so), else the session's current one.
 */
export function sessionMidTurnPolicy(deps: {
  registry: TurnRegistry;
  store: TurnStore;
  workflowById(id: string | null): Promise<{ mid_turn: string | null } | null>;
  channelDefault: ChannelPolicyDefault;
}) {
  return async (channel: ChannelName, sessionId: string): Promise<MidTurnPolicy> => {
    const live = await deps.registry.get(sessionId);
    const workflowId = live?.workflowId !== undefined ? live.workflowId : ((await deps.store.findSession(sessionId))?.active_workflow_id ?? null);
    return midTurnPolicy(channel, await deps.workflowById(workflowId), deps.channelDefault);
  };
}
