import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type RunningService } from '../../../src/main';
import { FakeMattermostServer, type FakePost } from '../../fakes/mattermost-server';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { TestTools } from '../../fakes/test-tools';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { LogCapture } from '../../helpers/log-capture';
import { freePort } from '../../helpers/redis-server';
import { makeTempDir } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';

export const BOT_TOKEN = 'mm-bot-token-never-logged-0123456789';

/** The hub with the Mattermost channel on, against a fake Mattermost server, a scripted model and fixture tools. */
export interface MattermostHarness {
  service: RunningService;
  mattermost: FakeMattermostServer;
  provider: ScriptedProvider;
  tools: TestTools;
  logs: LogCapture;
  api: string;
  adminToken: string;
  /** The hub stops (the fake Mattermost server stays) and starts again on the same port and data: `service` is the new one. */
  restartHub(whileDown?: () => void | Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Keys of `channels.mattermost` beyond the harness's own. */
  settings?: Record<string, unknown>;
  /** The token the hub is given (default: the one the fake accepts). */
  token?: string;
  /** The server URL the hub is given (default: the fake's). */
  url?: string;
  /** More environment of the hub (e.g. `SERVICE_DATABASE_URL`). */
  env?: Record<string, string>;
  /** Runs on the fake Mattermost server before the hub first starts (posts made before the hub ever ran). */
  beforeStart?(mattermost: FakeMattermostServer): void;
}

export async function startMattermostHarness(options: HarnessOptions = {}): Promise<MattermostHarness> {
  const mattermost = new FakeMattermostServer(BOT_TOKEN);
  await mattermost.start();
  options.beforeStart?.(mattermost);
  const cwd = makeTempDir();
  const port = await freePort();
  const config = {
    agent: { default_tools: ['lookup', 'save_note'] },
    channels: {
      mattermost: {
        edit_interval_ms: 100,
        typing_interval_ms: 200,
        reconnect_min_ms: 100,
        reconnect_max_ms: 400,
        actions_url: `http://127.0.0.1:${port}/api/v1/channels/mattermost/actions`,
        ...options.settings,
      },
    },
  };
  // JSON is YAML: the config file is written as JSON.
  writeFileSync(path.join(cwd, 'config.yaml'), JSON.stringify(config, null, 2));
  const provider = new ScriptedProvider();
  const tools = new TestTools();
  const logs = new LogCapture();
  const env = testEnv(path.join(cwd, 'data'), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_PORT: String(port),
    SERVICE_MATTERMOST_URL: options.url ?? mattermost.url,
    SERVICE_MATTERMOST_BOT_TOKEN: options.token ?? BOT_TOKEN,
    ...options.env,
  });
  const service = await startService({ env, cwd, logDestination: logs, provider, tools }).catch(async (error: unknown) => {
    await mattermost.stop();
    throw error;
  });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'root');
  const harness: MattermostHarness = {
    service,
    mattermost,
    provider,
    tools,
    logs,
    api,
    adminToken: token,
    restartHub: async (whileDown) => {
      await harness.service.stop();
      await whileDown?.();
      harness.service = await startService({ env, cwd, logDestination: logs, provider, tools });
    },
    stop: async () => {
      await harness.service.stop();
      await mattermost.stop();
    },
  };
  return harness;
}

/** The bot's posts in a channel (thread replies included) as they stand now: their messages. */
export function botMessages(mattermost: FakeMattermostServer, channelId: string, rootId?: string): string[] {
  return mattermost
    .botPosts(channelId)
    .filter((post) => rootId === undefined || post.root_id === rootId)
    .map((post) => post.message);
}

/** Resolves once a post of the bot in `channelId` reads `text` (posted, or edited to it); answers the post. */
export async function waitForBotPost(mattermost: FakeMattermostServer, channelId: string, text: string | RegExp, timeoutMs = 10_000): Promise<FakePost> {
  const matches = (post: FakePost) => (typeof text === 'string' ? post.message === text : text.test(post.message));
  await mattermost.waitFor(() => mattermost.botPosts(channelId).some(matches), timeoutMs);
  return mattermost.botPosts(channelId).find(matches)!;
}

/** The bot's post asking for a confirmation (buttons) in `channelId`. */
export async function waitForButtons(mattermost: FakeMattermostServer, channelId: string, timeoutMs = 10_000): Promise<FakePost> {
  const asks = () => mattermost.botPosts(channelId).find((post) => (post.props.attachments?.[0]?.actions?.length ?? 0) > 0);
  await mattermost.waitFor(() => asks() !== undefined, timeoutMs);
  return asks()!;
}
