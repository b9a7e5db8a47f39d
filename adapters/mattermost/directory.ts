import type { MattermostApi } from './mattermost-api';
import type { ChannelType } from './normalize';

/** Named limits of what the channel remembers of Mattermost (adapters/README.md: every limit a named default). */
export const DIRECTORY_LIMITS = {
  /** Users, channels and teams are looked up again after this long (a renamed user, a moved channel). */
  cacheMs: 10 * 60 * 1000,
  /** Thread roots remembered as the bot's (or not), at most this many; the oldest are forgotten first. */
  maxThreads: 10_000,
} as const;

export interface ChannelInfo {
  id: string;
  type: ChannelType;
  /** '' for direct and group messages. */
  teamId: string;
}

interface Cached<T> {
  value: T;
  at: number;
}

/**
 * What the channel knows of the Mattermost server: the bot's identity, the teams it serves, and
 * users, channels and teams looked up once and cached (DIRECTORY_LIMITS.cacheMs), plus which thread
 * roots are threads of the bot's (it answered there, or posted the root).
 */
export class Directory {
  private readonly channels = new Map<string, Cached<ChannelInfo | null>>();
  private readonly senders = new Map<string, Cached<{ displayName: string; position: string }>>();
  private readonly teamNames = new Map<string, string>();
  private readonly threads = new Map<string, boolean>();

  private constructor(
    private readonly api: MattermostApi,
    readonly bot: { id: string; username: string },
    /** The team ids served; null: every team. */
    private readonly servedTeams: ReadonlySet<string> | null,
    readonly teamIds: readonly string[],
  ) {}

  /** The bot's teams (`GET /users/me/teams`), narrowed to `teams` (names or ids) when given. */
  static async load(api: MattermostApi, bot: { id: string; username: string }, teams: readonly string[]): Promise<Directory> {
    const mine = await api.myTeams();
    const wanted = new Set(teams.map((team) => team.toLowerCase()));
    const served = mine.filter((team) => wanted.size === 0 || wanted.has(team.name.toLowerCase()) || wanted.has(team.id.toLowerCase()));
    const directory = new Directory(
      api,
      bot,
      wanted.size === 0 ? null : new Set(served.map((team) => team.id)),
      served.map((team) => team.id),
    );
    for (const team of mine) directory.teamNames.set(team.id, team.name);
    return directory;
  }

  /** Whether posts of `channel` are answered: DMs and group messages always, team channels of a served team. */
  serves(channel: ChannelInfo): boolean {
    return channel.teamId === '' || this.servedTeams === null || this.servedTeams.has(channel.teamId);
  }

  async channel(channelId: string): Promise<ChannelInfo | null> {
    return this.cached(this.channels, channelId, async () => {
      const channel = await this.api.channel(channelId);
      return { id: channel.id, type: channel.type as ChannelType, teamId: channel.team_id ?? '' };
    });
  }

  /** Who posted: a display name and the contact's tags (`team:<name>` of the channel's team, `position:<position>`). */
  async sender(userId: string, channel: ChannelInfo): Promise<{ displayName: string; tags: string[] }> {
    const user = await this.cached(this.senders, userId, async () => {
      const found = await this.api.user(userId);
      const full = [found.first_name, found.last_name].filter(Boolean).join(' ');
      return { displayName: full || found.nickname || found.username, position: found.position ?? '' };
    }).catch(() => ({ displayName: userId, position: '' }));
    const tags: string[] = [];
    const team = channel.teamId ? this.teamNames.get(channel.teamId) : undefined;
    if (team) tags.push(`team:${team}`);
    if (user.position.trim()) tags.push(`position:${user.position.trim().toLowerCase().replace(/\s+/g, '-')}`);
    return { displayName: user.displayName, tags };
  }

  /** Whether `rootId` is a thread of the bot's: it answered there before, or the thread holds a post of the bot. */
  async isBotThread(rootId: string): Promise<boolean> {
    const known = this.threads.get(rootId);
    if (known !== undefined) return known;
    const thread = await this.api.thread(rootId).catch(() => null);
    const mine = thread !== null && Object.values(thread.posts).some((post) => post.user_id === this.bot.id);
    this.remember(rootId, mine);
    return mine;
  }

  noteBotThread(rootId: string): void {
    this.remember(rootId, true);
  }

  private remember(rootId: string, mine: boolean): void {
    this.threads.delete(rootId);
    this.threads.set(rootId, mine);
    if (this.threads.size > DIRECTORY_LIMITS.maxThreads) this.threads.delete(this.threads.keys().next().value!);
  }

  private async cached<T>(map: Map<string, Cached<T>>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key);
    if (hit && Date.now() - hit.at < DIRECTORY_LIMITS.cacheMs) return hit.value;
    const value = await load();
    map.set(key, { value, at: Date.now() });
    return value;
  }
}
