import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { io, type Socket } from 'socket.io-client';
import { startService, type RunningService } from '../../../src/main';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { TestTools } from '../../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { jsonBody, request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';

/** The hub with the webchat channel on (settings from `channels.webchat`), a scripted model and fixture tools. */
export interface WebchatHarness {
  service: RunningService;
  /** http://127.0.0.1:<port> */
  base: string;
  api: string;
  provider: ScriptedProvider;
  tools: TestTools;
  logs: WatchedLogs;
  adminToken: string;
  /** An admin REST call. */
  admin(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/** Captured log lines, and a way to wait for one (what the hub did, seen from outside). */
export class WatchedLogs extends LogCapture {
  private wake: (() => void) | null = null;

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: () => void): void {
    super._write(chunk, encoding, callback);
    this.wake?.();
  }

  async until(predicate: (entry: Record<string, unknown>) => boolean): Promise<void> {
    while (!this.entries().some(predicate)) await new Promise<void>((resolve) => (this.wake = resolve));
  }
}

export const SESSION_SECRET = 'webchat-test-secret-never-logged';

export async function startWebchatHarness(
  webchat: Record<string, unknown> = {},
  env: Record<string, string> = {},
  more: Record<string, unknown> = {},
): Promise<WebchatHarness> {
  const cwd = makeTempDir();
  const config = { agent: { default_tools: ['lookup', 'save_note'] }, channels: { webchat: { enabled: true, ...webchat } }, ...more };
  // JSON is YAML: the config file is written as JSON.
  writeFileSync(path.join(cwd, 'config.yaml'), JSON.stringify(config, null, 2));
  const provider = new ScriptedProvider();
  const tools = new TestTools();
  const logs = new WatchedLogs();
  const service = await startService({
    env: testEnv(path.join(cwd, 'data'), { ...GENEROUS_RATE_LIMITS, SERVICE_LOG_LEVEL: 'debug', SERVICE_WEBCHAT_SESSION_SECRET: SESSION_SECRET, ...env }),
    cwd,
    logDestination: logs,
    provider,
    tools,
  });
  const base = `http://127.0.0.1:${service.port}`;
  const api = `${base}/api/v1`;
  const { token: adminToken } = await registerUser(api, 'ada');
  const admin = async (method: string, route: string, body?: unknown) => {
    const headers = { authorization: `Bearer ${adminToken}` };
    const response = await request(`${api}${route}`, body === undefined ? { method, headers } : { ...jsonBody(body, headers), method });
    return { status: response.status, body: response.body };
  };
  return { service, base, api, provider, tools, logs, adminToken, admin, stop: () => service.stop() };
}

export interface WidgetOptions {
  /** The id the widget kept from an earlier page (local storage); null on a first visit. */
  sessionId?: string | null;
  customData?: Record<string, unknown>;
  socketPath?: string;
  /** Sent as the Origin header (what a browser on that site sends). */
  origin?: string;
  transports?: ('polling' | 'websocket')[];
}

/** A `bot_uttered` message as the widget receives it. */
export interface Uttered {
  text: string;
  quick_replies?: { content_type: string; title: string; payload: string }[];
}

/**
 * What rasa-webchat 1.x does on the wire, with the socket.io-client major it bundles (3): connect to
 * `socketUrl` at `socketPath` (polling, then upgrade), emit `session_request {session_id}` on
 * connect, keep the id `session_confirm` gives, and send each message as
 * `user_uttered {message, customData, session_id}`. Collects `bot_uttered` and `bot_typing`.
 */
export class Widget {
  readonly messages: Uttered[] = [];
  readonly typing: boolean[] = [];
  sessionId: string | null;
  private read = 0;
  private wake: (() => void) | null = null;

  private constructor(
    readonly socket: Socket,
    private readonly customData: Record<string, unknown>,
    sessionId: string | null,
  ) {
    this.sessionId = sessionId;
    socket.on('bot_uttered', (message: Uttered) => {
      this.messages.push(message);
      this.wake?.();
    });
    socket.on('bot_typing', (event: { typing: boolean }) => {
      this.typing.push(event.typing);
      this.wake?.();
    });
    socket.on('session_confirm', (confirmed: unknown) => {
      // The widget takes `{session_id}` or the bare id.
      this.sessionId = typeof confirmed === 'object' && confirmed !== null ? (confirmed as { session_id: string }).session_id : (confirmed as string);
      this.wake?.();
    });
  }

  /** Opens the widget and resolves once the hub confirmed its session. */
  static open(base: string, options: WidgetOptions = {}): Promise<Widget> {
    const socket = io(base, {
      path: options.socketPath ?? '/socket.io/',
      forceNew: true, // one page, one connection: never share a manager between two "visitors"
      reconnection: false,
      transports: options.transports ?? ['polling', 'websocket'],
      ...(options.origin ? { extraHeaders: { Origin: options.origin } } : {}),
    });
    const widget = new Widget(socket, options.customData ?? {}, options.sessionId ?? null);
    return new Promise((resolve, reject) => {
      socket.once('connect_error', (error: Error) => reject(error));
      socket.once('session_confirm', () => resolve(widget));
      socket.on('connect', () => socket.emit('session_request', { session_id: widget.sessionId }));
    });
  }

  /** What the widget sends for typed text and for a clicked quick reply (its payload). */
  say(message: string, sessionId: string | null = this.sessionId): void {
    this.socket.emit('user_uttered', { message, customData: this.customData, session_id: sessionId });
  }

  /** The next `bot_uttered` not yet read. */
  async next(): Promise<Uttered> {
    await this.until(() => this.messages.length > this.read);
    return this.messages[this.read++]!;
  }

  /** The next `count` messages' texts. */
  async texts(count: number): Promise<string[]> {
    const texts: string[] = [];
    for (let index = 0; index < count; index++) texts.push((await this.next()).text);
    return texts;
  }

  /** Resolves once `condition` holds (checked whenever something arrives). */
  async until(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  close(): void {
    this.socket.close();
  }
}

/** The widgets a test file opened, closed after each test. */
export class Widgets {
  private readonly opened: Widget[] = [];

  constructor(private readonly base: () => string) {}

  async open(options: WidgetOptions = {}): Promise<Widget> {
    const widget = await Widget.open(this.base(), options);
    this.opened.push(widget);
    return widget;
  }

  closeAll(): void {
    for (const widget of this.opened.splice(0)) widget.close();
  }
}

/** Creates (admin) a workflow bound to the given channels. */
export async function createWorkflow(harness: WebchatHarness, workflow: Record<string, unknown>): Promise<void> {
  const response = await harness.admin('POST', '/assistant/workflows', workflow);
  if (response.status !== 201) throw new Error(`workflow: ${response.status} ${JSON.stringify(response.body)}`);
}
