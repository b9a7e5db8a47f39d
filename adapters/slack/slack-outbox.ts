import type { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import { NO_CHANNEL_TELEMETRY, type ChannelTelemetry } from '../../src/core/telemetry';
import { SendBudget, type SendBudgetLimits } from '../shared/send-budget';
import { SLACK_LIMITS } from './limits';
import { WorkspaceRefusals, type SlackFeature } from './refusals';

type WebClient = webApi.WebClient;
type Answer = webApi.WebAPICallResult;

/**
 * The Web API client's options: `rejectRateLimitedCalls` hands a 429 back to us (SlackOutbox pauses
 * that channel through the send budget and sends again) instead of the client pausing every call of
 * every channel; other failures are retried by the client.
 */
export function webClientOptions(apiUrl: string) {
  return { slackApiUrl: apiUrl, retryConfig: { retries: SLACK_LIMITS.apiRetries, factor: 2, minTimeout: 500 }, rejectRateLimitedCalls: true };
}

/** The Web API methods that write a message (they spend the channel's send budget). */
export type SendMethod = 'chat.postMessage' | 'chat.update' | 'chat.startStream' | 'chat.appendStream' | 'chat.stopStream';

/** A call that is not a message names its channel as `channel_id` (assistant methods) or `channel` (reactions). */
type ExtraArgs = ({ channel_id: string } | { channel: string }) & Record<string, unknown>;

/** The Slack calls one turn makes, bound to a workspace (its client and its remembered refusals). */
export interface SlackCalls {
  readonly workspace: string;
  readonly refusals: WorkspaceRefusals;
  /** A write that must happen: waits for a slot of the channel; after a 429 the channel pauses for Retry-After and the call goes again. */
  send(method: SendMethod, args: { channel: string } & Record<string, unknown>): Promise<Answer>;
  /** An interim write: only if a slot is free now; null when skipped (no slot, or Slack answered 429). */
  trySend(method: SendMethod, args: { channel: string } & Record<string, unknown>): Promise<Answer | null>;
  /**
   * A call that is not a message (thread status, suggested prompts): no budget slot, never throws.
   * Skipped while the workspace refuses `feature` or a 429's Retry-After for the channel runs;
   * answers whether Slack took it.
   */
  extra(feature: SlackFeature, method: string, args: ExtraArgs): Promise<boolean>;
}

/**
 * Everything the Slack channel sends goes out here: one send budget per adapter (per channel and
 * overall, shared by all turns) so a burst of turns stays inside Slack's limits, and every 429's
 * Retry-After pauses that channel through the budget. The Web API client is built with
 * `rejectRateLimitedCalls`, so it hands 429s to us instead of pausing all its calls.
 */
export class SlackOutbox {
  readonly refusals = new WorkspaceRefusals();
  private readonly budget: SendBudget;
  /** Per channel and method kind: no non-message call before this time (a 429's Retry-After). */
  private readonly extraPausedUntil = new Map<string, number>();

  constructor(
    limits: SendBudgetLimits,
    private readonly logger: Logger,
    private readonly telemetry: ChannelTelemetry = NO_CHANNEL_TELEMETRY,
  ) {
    this.budget = new SendBudget(limits);
  }

  /** One Web API call, counted by method and HTTP status (429s included) for the hub's metrics. */
  private async call(client: WebClient, method: string, args: Record<string, unknown>): Promise<Answer> {
    const started = performance.now();
    try {
      const answer = await client.apiCall(method, args);
      this.telemetry.platformCall(method, 200, (performance.now() - started) / 1000);
      return answer;
    } catch (error) {
      this.telemetry.platformCall(method, httpStatusOf(error), (performance.now() - started) / 1000);
      throw error;
    }
  }

  /** Rejects the sends still waiting for a slot (shutdown). */
  close(): void {
    this.budget.close();
  }

  calls(client: WebClient, workspace: string): SlackCalls {
    return {
      workspace,
      refusals: this.refusals,
      send: (method, args) => this.send(client, method, args),
      trySend: (method, args) => this.trySend(client, method, args),
      extra: (feature, method, args) => this.extra(client, workspace, feature, method, args),
    };
  }

  private async send(client: WebClient, method: SendMethod, args: { channel: string } & Record<string, unknown>): Promise<Answer> {
    for (let attempt = 0; ; attempt++) {
      await this.budget.take(args.channel);
      try {
        return await this.call(client, method, args);
      } catch (error) {
        const retryAfterS = rateLimitedFor(error);
        if (retryAfterS === null || attempt >= SLACK_LIMITS.rateLimitRetries) throw error;
        this.rateLimited(method, args.channel, retryAfterS);
      }
    }
  }

  private async trySend(client: WebClient, method: SendMethod, args: { channel: string } & Record<string, unknown>): Promise<Answer | null> {
    if (!this.budget.tryTake(args.channel)) return null;
    try {
      return await this.call(client, method, args);
    } catch (error) {
      const retryAfterS = rateLimitedFor(error);
      if (retryAfterS === null) throw error;
      this.rateLimited(method, args.channel, retryAfterS);
      return null;
    }
  }

  private async extra(client: WebClient, workspace: string, feature: SlackFeature, method: string, args: ExtraArgs): Promise<boolean> {
    const channel = 'channel_id' in args ? args.channel_id : args.channel;
    const key = `${feature}:${channel}`;
    if (this.refusals.isRefused(workspace, feature) || (this.extraPausedUntil.get(key) ?? 0) > Date.now()) return false;
    try {
      await this.call(client, method, args);
      return true;
    } catch (error) {
      const retryAfterS = rateLimitedFor(error);
      if (retryAfterS !== null) {
        this.extraPausedUntil.set(key, Date.now() + retryAfterS * 1000);
        this.logger.warn(
          { slack_method: method, slack_channel: channel, retry_after_s: retryAfterS },
          'Slack rate-limited a call; skipping it until Retry-After',
        );
      } else if (this.refusals.note(workspace, feature, error)) {
        this.logger.info(
          { slack_method: method, slack_workspace: workspace, reason: this.refusals.reason(workspace, feature) },
          `Slack refused ${method}; the workspace goes without it`,
        );
      } else {
        this.logger.warn({ err: error, slack_method: method, slack_channel: channel }, 'a Slack call failed');
      }
      return false;
    }
  }

  private rateLimited(method: string, channel: string, retryAfterS: number): void {
    this.budget.pause(retryAfterS * 1000, channel);
    this.logger.warn({ slack_method: method, slack_channel: channel, retry_after_s: retryAfterS }, 'Slack answered 429; the channel pauses for Retry-After');
  }
}

/** Retry-After (seconds) of a call Slack answered 429, or null for any other failure. */
function rateLimitedFor(error: unknown): number | null {
  const { code, retryAfter } = (error ?? {}) as { code?: unknown; retryAfter?: unknown };
  return code === 'slack_webapi_rate_limited_error' && typeof retryAfter === 'number' ? retryAfter : null;
}

/**
 * The HTTP status of a failed Web API call: 429 when rate-limited, the answer's status for an HTTP
 * error, 200 for a platform error (`ok: false` comes with 200), 0 when no answer came.
 */
function httpStatusOf(error: unknown): number {
  const { code, statusCode } = (error ?? {}) as { code?: unknown; statusCode?: unknown };
  if (code === 'slack_webapi_rate_limited_error') return 429;
  if (code === 'slack_webapi_platform_error') return 200;
  return typeof statusCode === 'number' ? statusCode : 0;
}
