import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

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
}

interface FakeChannel {
  id: string;
  type: 'D' | 'O' | 'P' | 'G';
  team_id: string;
  name: string;
  display_name: string;
}

/** Mattermost's rate limiter: `perSecond` requests a second per token (the server's `PerSec`), answered 429 past it. */
export interface FakeRateLimit {
  perSecond: number;
}

const WS_PATH = '/api/v4/websocket';

/**
 * A fake Mattermost server on a loopback port, speaking the real REST v4 (Bearer tokens, JSON
 * bodies, `{id, message, status_code}` errors, `X-Ratelimit-Limit/Remaining/Reset` on every answer,
 * 429 with `Retry-After` past its limit) and the real WebSocket protocol at `/api/v4/websocket`:
 * the client's `authentication_challenge` is answered `{status: OK, seq_reply}`, then `hello` with a
 * `connection_id` opens the event stream, every event numbered by `seq` from 0; `posted`,
 * `post_edited` and `post_deleted` carry the post as a JSON string, as Mattermost does. Interactive
 * message buttons are clicked as Mattermost does it: a POST of the action's context to its
 * integration URL, the answer's `update` applied to the post. Stands in for Mattermost (an external service).
 */
export class FakeMattermostServer {
  readonly calls: MattermostCall[] = [];
  readonly posts = new Map<string, FakePost>();
  readonly bot = { id: 'botuser0000000000000000001', username: 'switchboard', first_name: '', last_name: '', nickname: '', is_bot: true, roles: 'system_user' };
  readonly team = { id: 'team00000000000000000000001', name: 'ops', display_name: 'Ops' };
  readonly users = new Map<string, Record<string, any>>();
  readonly channels = new Map<string, FakeChannel>();
  /** Every `user_typing` action the bot sent over the socket: `channel_id` and `parent_id`. */
  readonly typing: { channel_id: string; parent_id: string }[] = [];
  /** Reactions as they stand: `post_id:emoji`. */
  readonly reactions = new Set<string>();
  /** Sockets opened (authenticated or not) since start. */
  connections = 0;
  rateLimit: FakeRateLimit | null = null;
  /** The next REST calls are answered 429 (as a burst past the limit), whatever the limit. */
  throttleNext = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<{ socket: WebSocket; seq: number; authenticated: boolean }>();
  private readonly waiters: (() => void)[] = [];
  private readonly recent: number[] = [];
  private clock = Date.now();

  constructor(public token: string) {
    this.addUser({ id: 'user00000000000000000000001', username: 'ada', first_name: 'Ada', last_name: 'Lovelace', position: 'SRE' });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    const wss = new WebSocketServer({ noServer: true });
    this.server = createServer((request, response) => void this.handle(request, response));
    this.server.on('upgrade', (request, socket, head) => {
      if (!request.url?.startsWith(WS_PATH)) return socket.destroy();
      wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const { socket } of this.sockets) socket.terminate();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  addUser(user: Record<string, any>): Record<string, any> {
    const full: Record<string, any> = { first_name: '', last_name: '', nickname: '', position: '', roles: 'system_user', is_bot: false, ...user };
    this.users.set(full.id, full);
    return full;
  }

  /** The direct-message channel between the bot and `userId` (Mattermost names it `<a>__<b>`). */
  directChannel(userId: string): string {
    const id = `dm${userId.slice(-6)}${randomBytes(8).toString('hex')}`.slice(0, 26);
    const existing = [...this.channels.values()].find((channel) => channel.type === 'D' && channel.name.includes(userId));
    if (existing) return existing.id;
    this.channels.set(id, { id, type: 'D', team_id: '', name: `${this.bot.id}__${userId}`, display_name: '' });
    return id;
  }

  /** A public channel of the team (or `teamId`). */
  openChannel(name: string, teamId = this.team.id): string {
    const id = `ch${randomBytes(12).toString('hex')}`;
    this.channels.set(id, { id, type: 'O', team_id: teamId, name, display_name: name });
    return id;
  }

  /** A person posts (as the Mattermost web app would): stored, then `posted` to every socket. */
  userPosts(userId: string, channelId: string, message: string, rootId = ''): FakePost {
    const post = this.store(userId, channelId, message, rootId, {});
    this.broadcastPosted(post);
    return post;
  }

  /** The `posted` event of `postId` once more, as a server replaying its queue to a reconnected client does. */
  repost(postId: string): void {
    this.broadcastPosted(this.posts.get(postId)!);
  }

  /** Every message text the bot wrote in `channelId`, in order: posts created and each edit (what a person saw go by). */
  writtenIn(channelId: string): string[] {
    return this.calls
      .filter((call) => call.status < 300 && call.path.startsWith('/api/v4/posts'))
      .filter((call) => (call.method === 'POST' ? call.body?.channel_id === channelId : this.posts.get(call.path.split('/')[4]!)?.channel_id === channelId))
      .flatMap((call) => [call.body?.message ?? '', ...((call.body?.props?.attachments ?? []) as any[]).map((attachment) => String(attachment.text ?? ''))])
      .filter((text) => text !== '');
  }

  /** A person posts while no socket hears it (the hub is disconnected): only catch-up finds it. */
  userPostsUnheard(userId: string, channelId: string, message: string, rootId = ''): FakePost {
    return this.store(userId, channelId, message, rootId, {});
  }

  userEdits(postId: string, message: string): void {
    const post = this.posts.get(postId)!;
    post.message = message;
    post.edit_at = post.update_at = this.now();
    this.broadcast('post_edited', { post: JSON.stringify(post) }, post.channel_id);
  }

  userDeletes(postId: string): void {
    const post = this.posts.get(postId)!;
    post.delete_at = post.update_at = this.now();
    this.broadcast('post_deleted', { post: JSON.stringify(post) }, post.channel_id);
  }

  /** Every socket's next event number is skipped, as when the server lost an event for this client: the client sees a gap. */
  skipSeq(): void {
    for (const entry of this.sockets) entry.seq += 1;
  }

  /** Drops every event socket, as a network failure or a server restart would (no close handshake). */
  dropSockets(): void {
    for (const entry of this.sockets) entry.socket.terminate();
    this.sockets.clear();
  }

  get openSockets(): number {
    return [...this.sockets].filter((entry) => entry.authenticated).length;
  }

  /** Posts by the bot in `channelId` (a thread's replies included), oldest first. */
  botPosts(channelId: string): FakePost[] {
    return [...this.posts.values()].filter((post) => post.user_id === this.bot.id && post.channel_id === channelId).sort((a, b) => a.create_at - b.create_at);
  }

  /**
   * A person clicks button `actionId` of post `postId`: Mattermost POSTs the action's integration
   * context to its URL and applies the answer's `update` to the post. Answers the integration's status and body.
   */
  async click(postId: string, actionId: string, userId: string): Promise<{ status: number; body: any }> {
    const post = this.posts.get(postId)!;
    const action = (post.props.attachments ?? []).flatMap((attachment: any) => attachment.actions ?? []).find((candidate: any) => candidate.id === actionId);
    if (!action) throw new Error(`no action ${actionId} on post ${postId}`);
    const user = this.users.get(userId)!;
    const channel = this.channels.get(post.channel_id)!;
    const response = await fetch(action.integration.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: userId,
        user_name: user.username,
        channel_id: post.channel_id,
        channel_name: channel.name,
        team_id: channel.team_id,
        team_domain: this.team.name,
        post_id: postId,
        trigger_id: randomBytes(8).toString('hex'),
        type: '',
        data_source: '',
        context: action.integration.context,
      }),
    });
    const body: any = await response.json().catch(() => null);
    if (response.ok && body?.update) {
      Object.assign(post, { message: body.update.message ?? post.message, props: body.update.props ?? post.props, update_at: this.now() });
      this.broadcast('post_edited', { post: JSON.stringify(post) }, post.channel_id);
    }
    return { status: response.status, body };
  }

  /** Resolves once `predicate` holds (checked after every call and event). */
  async waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error('FakeMattermostServer: timed out waiting');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  private notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Milliseconds, strictly increasing: Mattermost's `since` compares update_at. */
  private now(): number {
    this.clock = Math.max(this.clock + 1, Date.now());
    return this.clock;
  }

  private store(userId: string, channelId: string, message: string, rootId: string, props: Record<string, any>): FakePost {
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

  private broadcastPosted(post: FakePost): void {
    const channel = this.channels.get(post.channel_id)!;
    const mentions = post.message.includes(`@${this.bot.username}`) ? [this.bot.id] : [];
    const sender = this.users.get(post.user_id) ?? this.bot;
    this.broadcast(
      'posted',
      {
        channel_display_name: channel.display_name,
        channel_name: channel.name,
        channel_type: channel.type,
        post: JSON.stringify(post),
        sender_name: `@${sender.username}`,
        set_online: true,
        team_id: channel.team_id,
        ...(mentions.length > 0 ? { mentions: JSON.stringify(mentions) } : {}),
      },
      post.channel_id,
    );
  }

  private broadcast(event: string, data: Record<string, unknown>, channelId: string): void {
    for (const entry of this.sockets) {
      if (!entry.authenticated) continue;
      entry.socket.send(JSON.stringify({ event, data, broadcast: { omit_users: null, user_id: '', channel_id: channelId, team_id: '' }, seq: entry.seq++ }));
    }
    this.notify();
  }

  private accept(socket: WebSocket): void {
    this.connections += 1;
    const entry = { socket, seq: 0, authenticated: false };
    this.sockets.add(entry);
    socket.on('close', () => {
      this.sockets.delete(entry);
      this.notify();
    });
    socket.on('message', (raw) => {
      let frame: { seq?: number; action?: string; data?: Record<string, any> };
      try {
        frame = JSON.parse(String(raw));
      } catch {
        return socket.close(1003);
      }
      const reply = (status: string, extra: Record<string, unknown> = {}) => socket.send(JSON.stringify({ status, seq_reply: frame.seq, ...extra }));
      if (frame.action === 'authentication_challenge') {
        if (frame.data?.token !== this.token) {
          reply('FAIL', { error: { id: 'api.web_socket_router.not_authenticated.app_error', message: 'Invalid or expired session' } });
          return socket.close(1008);
        }
        entry.authenticated = true;
        reply('OK');
        // A new connection id every time: the server kept no queue for this client, so it catches up over REST.
        socket.send(
          JSON.stringify({
            event: 'hello',
            data: { connection_id: randomBytes(13).toString('hex'), server_version: '10.5.0', server_hostname: 'fake' },
            broadcast: { user_id: this.bot.id },
            seq: entry.seq++,
          }),
        );
        return this.notify();
      }
      if (!entry.authenticated) return reply('FAIL', { error: { id: 'api.web_socket_router.not_authenticated.app_error', message: 'not authenticated' } });
      if (frame.action === 'user_typing') this.typing.push({ channel_id: String(frame.data?.channel_id), parent_id: String(frame.data?.parent_id ?? '') });
      if (frame.action === 'ping') return reply('OK', { data: { text: 'pong', version: '10.5.0' } });
      reply('OK');
      this.notify();
    });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? JSON.parse(text) : null;
    const url = new URL(request.url ?? '/', 'http://fake');
    const call: MattermostCall = { method: request.method ?? 'GET', path: url.pathname, body, status: 0, at: Date.now() };
    const answer = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      this.calls.push(call);
      const json = typeof payload === 'string' ? null : JSON.stringify(payload);
      response.writeHead(status, { 'content-type': json === null ? 'text/plain' : 'application/json', ...this.limitHeaders(), ...headers });
      response.end(json ?? payload);
      this.notify();
    };
    // Mattermost takes the scheme in any case (Client4 sends `BEARER <token>`).
    if (!/^bearer$/i.test(request.headers.authorization?.split(' ')[0] ?? '') || request.headers.authorization?.split(' ')[1] !== this.token) {
      return answer(401, { id: 'api.context.session_expired.app_error', message: 'Invalid or expired session, please login again.', status_code: 401 });
    }
    if (this.throttled()) return answer(429, 'limit exceeded\n', { 'Retry-After': '1' });
    const result = this.route(call.method, url, body);
    answer(result.status, result.body);
  }

  private limitHeaders(): Record<string, string> {
    const limit = this.rateLimit?.perSecond ?? 10;
    const used = this.recent.filter((at) => at > Date.now() - 1000).length;
    return { 'X-Ratelimit-Limit': String(limit), 'X-Ratelimit-Remaining': String(Math.max(0, limit - used)), 'X-Ratelimit-Reset': '1' };
  }

  private throttled(): boolean {
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

  private route(method: string, url: URL, body: any): { status: number; body: unknown } {
    const parts = url.pathname.replace(/^\/api\/v4\//, '').split('/');
    const notFound = { status: 404, body: { id: 'app.not_found', message: 'Unable to find the resource.', status_code: 404 } };
    const ok = (value: unknown) => ({ status: 200, body: value });
    const [resource, id, sub, subId] = parts;
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
