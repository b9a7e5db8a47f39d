import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { FakeMattermostState, type FakePost, type MattermostCall } from './mattermost-rest';

export type { FakePost, FakeRateLimit, MattermostCall } from './mattermost-rest';

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
export class FakeMattermostServer extends FakeMattermostState {
  /** Every `user_typing` action the bot sent over the socket: `channel_id` and `parent_id`. */
  readonly typing: { channel_id: string; parent_id: string }[] = [];
  /** Sockets opened (authenticated or not) since start. */
  connections = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<{ socket: WebSocket; seq: number; authenticated: boolean }>();
  private readonly waiters: (() => void)[] = [];

  constructor(public token: string) {
    super();
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

  protected notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  protected broadcastPosted(post: FakePost): void {
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

  protected broadcast(event: string, data: Record<string, unknown>, channelId: string): void {
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
      const limits = this.limitHeaders();
      call.remaining = Number(limits['X-Ratelimit-Remaining']);
      this.calls.push(call);
      const json = typeof payload === 'string' ? null : JSON.stringify(payload);
      response.writeHead(status, { 'content-type': json === null ? 'text/plain' : 'application/json', ...limits, ...headers });
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
}
