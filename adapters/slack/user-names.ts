import type { webApi } from '@slack/bolt';
import type { Logger } from 'pino';
import { SLACK_LIMITS } from './limits';

type WebClient = webApi.WebClient;

/** Display names of Slack users (users.info), cached so a busy thread costs one lookup per person. */
export class UserNames {
  private readonly cache = new Map<string, { name: string | undefined; at: number }>();

  constructor(private readonly logger: Logger) {}

  async lookup(client: WebClient, userId: string): Promise<string | undefined> {
    const hit = this.cache.get(userId);
    if (hit && Date.now() - hit.at < SLACK_LIMITS.userCacheTtlMs) return hit.name;
    let name: string | undefined;
    try {
      const answer = await client.users.info({ user: userId });
      const profile = answer.user?.profile;
      name = profile?.display_name || profile?.real_name || answer.user?.real_name || answer.user?.name || undefined;
    } catch (error) {
      // A missing users:read scope or a hiccup: the message still counts, just without a name.
      this.logger.warn({ err: error, slack_user: userId }, 'could not look up a Slack user');
    }
    this.cache.delete(userId);
    this.cache.set(userId, { name, at: Date.now() });
    if (this.cache.size > SLACK_LIMITS.userCacheSize) this.cache.delete(this.cache.keys().next().value!);
    return name;
  }
}
