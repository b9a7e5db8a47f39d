import { randomBytes } from 'node:crypto';

/** A post as Mattermost stores and sends it (the fields the hub reads, and a few more). */
export interface FakePost {
  id: string;
  create_at: number;
  update_at: number;
  edit_at: number;
  delete_at: number;
  user_id: string;
  channel_id: string;
  root_id: string;
  message: string;
  type: string;
  props: Record<string, any>;
}

/** One REST call the fake received. */
export interface MattermostCall {
  method: string;
  path: string;
  body: any;
  status: number;
  at: number;
  /** The X-Ratelimit-Remaining it was answered with. */
  remaining?: number;
}

interface FakeChannel {
  id: string;
  type: 'D' | 'O' | 'P' | 'G';
  team_id: string;
  name: string;
  display_name: string;
}

/** A user group (custom or LDAP-synced) and its members' user ids. */
export interface FakeGroup {
  id: string;
  name: string;
  display_name: string;
  members: Set<string>;
}

/** Mattermost's rate limiter: `perSecond` requests a second per token (the server's `PerSec`), answered 429 past it. */
export interface FakeRateLimit {
  perSecond: number;
}

/**
 * The state of a fake Mattermost server and its REST v4 routes (users, teams, channels, posts,
 * patches, threads, `posts?since=`, reactions) with Mattermost's answers and its rate limiter:
 * `X-Ratelimit-*` headers on every answer, 429 past the limit. The server (mattermost-server.ts)
 * adds HTTP, the event WebSocket and the people's side.
 */
export abstract class FakeMattermostState {
  readonly calls: MattermostCall[] = [];
  readonly posts = new Map<string, FakePost>();
  readonly bot = { id: 'botuser0000000000000000001', username: 'switchboard', first_name: '', last_name: '', nickname: '', is_bot: true, roles: 'system_user' };
  readonly team = { id: 'team00000000000000000000001', name: 'ops', display_name: 'Ops' };
  readonly users = new Map<string, Record<string, any>>();
  readonly channels = new Map<string, FakeChannel>();
  /** Reactions as they stand: `post_id:emoji`. */
  readonly reactions = new Set<string>();
  /** User groups, by id (`GET /groups?q=`, `GET /groups/{id}/members`). */
  readonly groups = new Map<string, FakeGroup>();
  /** Channel admins: `channel_id:user_id` (their membership's roles include `channel_admin`). */
  readonly channelAdmins = new Set<string>();
  /** The bot may not read groups and channel members: 403, as a server whose permissions do not let it. */
  forbidMembership = false;
  rateLimit: FakeRateLimit | null = null;
  /** The next REST calls are answered 429 (as a burst past the limit), whatever the limit. */
  throttleNext = 0;
  private readonly recent: number[] = [];
  private clock = Date.now();

  /** Tells every socket of an event (the server's side). */
  protected abstract broadcast(event: string, data: Record<string, unknown>, channelId: string): void;
  protected abstract broadcastPosted(post: FakePost): void;
  protected abstract notify(): void;

  /** Milliseconds, strictly increasing: Mattermost's `since` compares update_at. */
  protected now(): number {
    this.clock = Math.max(this.clock + 1, Date.now());
    return this.clock;
  }

  protected store(userId: string, channelId: string, message: string, rootId: string, props: Record<string, any>): FakePost {
    const at = this.now();
    const post: FakePost = {
      id: randomBytes(13).toString('hex'),
      create_at: at,
      update_at: at,
      edit_at: 0,
      delete_at: 0,
      user_id: userId,
      channel_id: channelId,
      root_id: rootId,
      message,
      type: '',
      props,
    };
    this.posts.set(post.id, post);
    this.notify();
    return post;
  }

  protected limitHeaders(): Record<string, string> {
    const limit = this.rateLimit?.perSecond ?? 10;
    const used = this.recent.filter((at) => at > Date.now() - 1000).length;
    return { 'X-Ratelimit-Limit': String(limit), 'X-Ratelimit-Remaining': String(Math.max(0, limit - used)), 'X-Ratelimit-Reset': '1' };
  }

  protected throttled(): boolean {
    if (this.throttleNext > 0) {
      this.throttleNext -= 1;
      return true;
    }
    if (!this.rateLimit) return false;
    const now = Date.now();
    while (this.recent.length > 0 && this.recent[0]! <= now - 1000) this.recent.shift();
    if (this.recent.length >= this.rateLimit.perSecond) return true;
    this.recent.push(now);
    return false;
  }

  protected route(method: string, url: URL, body: any): { status: number; body: unknown } {
    const parts = url.pathname.replace(/^\/api\/v4\//, '').split('/');
    const notFound = { status: 404, body: { id: 'app.not_found', message: 'Unable to find the resource.', status_code: 404 } };
    const ok = (value: unknown) => ({ status: 200, body: value });
    const [resource, id, sub, subId] = parts;
    const membership = this.membershipRoute(parts, url);
    if (membership) return membership;
    if (resource === 'users' && id === 'me' && sub === undefined) return ok(this.bot);
    if (resource === 'users' && id === 'me' && sub === 'teams' && subId === undefined) return ok([this.team]);
    if (resource === 'users' && id === 'me' && sub === 'teams' && parts[4] === 'channels') return ok([...this.channels.values()]);
    if (resource === 'users' && id !== undefined && sub === undefined) return this.users.has(id) ? ok(this.users.get(id)) : notFound;
    if (resource === 'teams' && id === this.team.id) return ok(this.team);
    if (resource === 'channels' && id !== undefined && sub === undefined) return this.channels.has(id) ? ok(this.channels.get(id)) : notFound;
    if (resource === 'channels' && id !== undefined && sub === 'posts' && method === 'GET')
      return ok(this.postsSince(id, Number(url.searchParams.get('since') ?? 0)));
    if (resource === 'posts' && method === 'POST' && id === undefined) return this.create(body);
    if (resource === 'posts' && id !== undefined && sub === 'patch' && method === 'PUT') return this.patch(id, body);
    if (resource === 'posts' && id !== undefined && sub === 'thread') return this.thread(id);
    if (resource === 'posts' && id !== undefined && sub === undefined && method === 'GET') return this.posts.has(id) ? ok(this.posts.get(id)) : notFound;
    if (resource === 'reactions' && method === 'POST') {
      const reaction = body;
      this.reactions.add(`${reaction.post_id}:${reaction.emoji_name}`);
      return ok({ ...reaction, create_at: this.now() });
    }
    if (resource === 'users' && sub === 'posts' && parts[4] === 'reactions' && method === 'DELETE') {
      this.reactions.delete(`${parts[3]}:${parts[5]}`);
      return ok({ status: 'OK' });
    }
    return notFound;
  }

  /** Groups and their members, a channel member's roles (what approver checks read); null: not such a route. */
  private membershipRoute(parts: string[], url: URL): { status: number; body: unknown } | null {
    const [resource, id, sub, subId] = parts;
    const isGroups = resource === 'groups';
    const isMember = resource === 'channels' && sub === 'members' && subId !== undefined;
    if (!isGroups && !isMember) return null;
    const notFound = { status: 404, body: { id: 'app.not_found', message: 'Unable to find the resource.', status_code: 404 } };
    if (this.forbidMembership) {
      return { status: 403, body: { id: 'api.context.permissions.app_error', message: 'You do not have the appropriate permissions.', status_code: 403 } };
    }
    if (isMember) {
      if (!this.channels.has(id!) || !this.users.has(subId!)) return notFound;
      const admin = this.channelAdmins.has(`${id}:${subId}`);
      return {
        status: 200,
        body: { channel_id: id, user_id: subId, roles: admin ? 'channel_user channel_admin' : 'channel_user', scheme_admin: admin, scheme_user: true },
      };
    }
    if (id === undefined) {
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      const found = [...this.groups.values()].filter((group) => group.name.includes(q) || group.display_name.toLowerCase().includes(q));
      return { status: 200, body: found.map(({ members, ...group }) => ({ ...group, member_count: members.size, source: 'custom' })) };
    }
    const group = this.groups.get(id);
    if (!group || sub !== 'members') return notFound;
    const perPage = Number(url.searchParams.get('per_page') ?? 60);
    const page = Number(url.searchParams.get('page') ?? 0);
    const members = [...group.members].slice(page * perPage, (page + 1) * perPage).map((userId) => this.users.get(userId) ?? { id: userId });
    return { status: 200, body: { members, total_member_count: group.members.size } };
  }

  private create(body: any): { status: number; body: unknown } {
    if (!this.channels.has(body?.channel_id))
      return { status: 400, body: { id: 'api.post.create_post.bad_channel', message: 'Invalid channel_id.', status_code: 400 } };
    if (typeof body.message === 'string' && body.message.length > 16383) {
      return { status: 400, body: { id: 'model.post.is_valid.msg.app_error', message: 'Invalid message.', status_code: 400 } };
    }
    const post = this.store(this.bot.id, body.channel_id, body.message ?? '', body.root_id ?? '', body.props ?? {});
    this.broadcastPosted(post);
    return { status: 201, body: post };
  }

  private patch(id: string, body: any): { status: number; body: unknown } {
    const post = this.posts.get(id);
    if (!post || post.delete_at) return { status: 404, body: { id: 'app.post.get.app_error', message: 'Unable to get the post.', status_code: 404 } };
    if (typeof body.message === 'string' && body.message.length > 16383) {
      return { status: 400, body: { id: 'model.post.is_valid.msg.app_error', message: 'Invalid message.', status_code: 400 } };
    }
    if (typeof body.message === 'string') post.message = body.message;
    if (body.props) post.props = body.props;
    post.edit_at = post.update_at = this.now();
    this.broadcast('post_edited', { post: JSON.stringify(post) }, post.channel_id);
    return { status: 200, body: post };
  }

  private thread(rootId: string): { status: number; body: unknown } {
    const posts = [...this.posts.values()].filter((post) => post.id === rootId || post.root_id === rootId);
    return { status: 200, body: { order: posts.map((post) => post.id), posts: Object.fromEntries(posts.map((post) => [post.id, post])) } };
  }

  private postsSince(channelId: string, since: number) {
    const posts = [...this.posts.values()].filter((post) => post.channel_id === channelId && post.update_at > since);
    posts.sort((a, b) => b.create_at - a.create_at);
    return { order: posts.map((post) => post.id), posts: Object.fromEntries(posts.map((post) => [post.id, post])), next_post_id: '', prev_post_id: '' };
  }
}
