import { createHmac } from 'node:crypto';
import { FAKE_SLACK } from '../fakes/slack-api';
import { jsonBody, request, type JsonResponse } from './http';

/**
 * Platform deliveries as Slack and Telegram make them, to a hub's webhook endpoints: Events API and
 * interactivity requests signed with the app's signing secret, Telegram updates with the webhook's
 * secret header. `base` is a hub's http://127.0.0.1:<port>.
 */
export class ChatWebhooks {
  private events = 0;

  constructor(
    private readonly slackSigningSecret: string,
    private readonly telegramSecret: string,
  ) {}

  /** A signed Slack request to `/channels/slack/<path>` (`events` or `interactions`). */
  slackSigned(base: string, path: 'events' | 'interactions', contentType: string, body: string): Promise<JsonResponse> {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac('sha256', this.slackSigningSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
    return request(`${base}/api/v1/channels/slack/${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
      body,
    });
  }

  /** A Slack event in its Events API envelope (a fresh event id unless given: a retry repeats it). */
  slackEventBody(event: Record<string, unknown>, eventId = `EvHub${++this.events}`): string {
    return JSON.stringify({
      token: 'legacy',
      team_id: FAKE_SLACK.teamId,
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
      event,
    });
  }

  /** Delivers a Slack event; throws unless acknowledged 200. */
  async slackEvent(base: string, event: Record<string, unknown>, eventId?: string): Promise<void> {
    const ack = await this.slackSigned(base, 'events', 'application/json', this.slackEventBody(event, eventId));
    if (ack.status !== 200) throw new Error(`Slack event refused by ${base}: ${ack.status} ${JSON.stringify(ack.body)}`);
  }

  /** A click on a Slack button (interactivity payload); throws unless acknowledged 200. */
  async slackClick(base: string, payload: Record<string, unknown>): Promise<void> {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const ack = await this.slackSigned(base, 'interactions', 'application/x-www-form-urlencoded', body);
    if (ack.status !== 200) throw new Error(`Slack click refused by ${base}: ${ack.status}`);
  }

  /** Delivers a Telegram update to the webhook; throws unless acknowledged 200. */
  async telegramUpdate(base: string, update: unknown): Promise<void> {
    const ack = await request(`${base}/api/v1/channels/telegram/webhook`, jsonBody(update, { 'x-telegram-bot-api-secret-token': this.telegramSecret }));
    if (ack.status !== 200) throw new Error(`Telegram update refused by ${base}: ${ack.status} ${JSON.stringify(ack.body)}`);
  }
}
