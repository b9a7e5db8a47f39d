import { Writable } from 'node:stream';
import { z } from 'zod';
import { CHANNELS } from '../../adapters';
import { conversationOfKey, sessionKeyOf } from '../../adapters/slack/normalize';
import { telegramSessionKey } from '../../adapters/telegram/normalize';
import { ConfigError, ENV_BINDINGS, envBindingsFor, loadConfig } from '../../src/config';
import {
  CHANNEL_NAME,
  channelOwner,
  defineChannel,
  describeBindings,
  isKnownBinding,
  parseSessionKey,
  routingChannelOf,
  type ChannelAdapter,
  type ChannelDescriptor,
} from '../../src/core/channel';
import type { DonePayload } from '../../src/core/events';
import { followTurn } from '../../src/core/follow-turn';
import type { Hub } from '../../src/core/hub';
import { createLogger } from '../../src/logs/logger';
import { secretHeaderPaths } from '../../src/logs/redact';
import { startService } from '../../src/main';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { TEST_JWT_SECRET, testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { ScriptedProvider } from '../fakes/scripted-provider';

/** The channel registry (adapters/index.ts) and what the hub does with it. */
afterAll(removeTempDirs);

const byName = (name: string) => CHANNELS.find((channel) => channel.name === name)!;

describe('the registry', () => {
  it('lists slack, telegram, web, webchat and mattermost once each, in the order the admin API shows them', () => {
    expect(CHANNELS.map((channel) => channel.name)).toEqual(['slack', 'telegram', 'web', 'webchat', 'mattermost']);
    for (const channel of CHANNELS) expect(channel.name).toMatch(CHANNEL_NAME);
  });

  it('binds every SERVICE_* variable of a channel to a key of its own section, none twice', () => {
    const all = envBindingsFor(CHANNELS);
    expect(new Set(all.map((binding) => binding.env)).size).toBe(all.length);
    for (const channel of CHANNELS) {
      const keys = Object.keys(channel.config ? (channel.config.schema.parse({}) as object) : {});
      expect((channel.config?.env ?? []).filter((binding) => !keys.includes(binding.key))).toEqual([]);
    }
    // The hub's own bindings name no channel: those belong to the adapters.
    expect(ENV_BINDINGS.filter((binding) => binding.path[0] === 'channels')).toEqual([]);
  });

  it('builds no chat adapter for a channel that is off, and always the web one', () => {
    const context = {
      logger: createLogger({ level: 'silent', format: 'json', name: 'test' }),
      allowedOrigins: new Set<string>(),
      socketIdleTimeoutMs: 90_000,
      clientAddress: () => '127.0.0.1',
    };
    for (const name of ['slack', 'telegram', 'webchat']) {
      const channel = byName(name);
      expect(channel.create({ ...context, settings: channel.config!.schema.parse({}) })).toBeNull();
    }
    const web = byName('web').create({ ...context, settings: undefined });
    expect(web?.name).toBe('web');
    expect(web?.upgrade?.matches('/ws/v1/sessions/abc')).toBe(true);
  });
});

describe('session keys and routing scopes', () => {
  it('round-trips a Slack thread and DM through its key, routing as slack:<channel id>', () => {
    for (const conversation of [
      { team: 'T123', channel: 'C456', threadTs: '1700000000.000100' },
      { team: 'T123', channel: 'D789', threadTs: null },
    ]) {
      const key = sessionKeyOf(conversation);
      const parsed = parseSessionKey(key)!;
      expect(parsed.channel).toBe('slack');
      expect(conversationOfKey(parsed.conversation)).toEqual(conversation);
      expect(routingChannelOf({ channel: 'slack', session_key: key }, CHANNELS)).toBe(`slack:${conversation.channel}`);
    }
    expect(sessionKeyOf({ team: 'T1', channel: 'C1', threadTs: '1.2' })).toBe('slack::T1:C1:1.2');
    expect(conversationOfKey('T1')).toBeNull();
    expect(routingChannelOf({ channel: 'slack', session_key: 'slack::T1' }, CHANNELS)).toBe('slack');
  });

  it('routes a Telegram chat as telegram:<chat id> and a web session as web', () => {
    const key = telegramSessionKey(-100123);
    expect(key).toBe('telegram::-100123');
    expect(routingChannelOf({ channel: 'telegram', session_key: key }, CHANNELS)).toBe('telegram:-100123');
    expect(routingChannelOf({ channel: 'web', session_key: null }, CHANNELS)).toBe('web');
  });

  it('knows which binding channels exist', () => {
    expect(['web', 'slack', 'telegram', 'slack:C1', 'telegram:-42'].filter((value) => !isKnownBinding(value, CHANNELS))).toEqual([]);
    expect(['web:x', 'irc', 'irc:1', 'Slack', 'slack:'].filter((value) => isKnownBinding(value, CHANNELS))).toEqual([]);
    expect(describeBindings(CHANNELS)).toBe('slack, telegram, web, webchat, mattermost, slack:<channel id>, telegram:<chat id> or mattermost:<channel id>');
  });
});

it("redacts each channel's secret webhook headers in every log line", () => {
  const lines: string[] = [];
  const destination = new Writable({ write: (chunk, _encoding, done) => void (lines.push(String(chunk)), done()) });
  const redactPaths = secretHeaderPaths(CHANNELS.flatMap((channel) => channel.secretHeaders ?? []));
  const logger = createLogger({ level: 'info', format: 'json', name: 'test', destination, redactPaths });
  logger.info({ req: { headers: { 'x-slack-signature': 'v0=sig-value', 'x-telegram-bot-api-secret-token': 'tg-secret-value', accept: 'a' } } }, 'webhook');
  expect(lines.join('')).not.toMatch(/sig-value|tg-secret-value/);
  expect(lines.join('')).toContain('"accept":"a"');
});

// ---------------------------------------------------------------------------------------------
// A further channel, defined here and never named in src/: one descriptor, added to the list.

const relaySettings = z.strictObject({ enabled: z.boolean().default(false), mode: z.enum(['poll', 'push']).default('poll') });

class RelayAdapter implements ChannelAdapter {
  readonly name = 'relay';
  private hub: Hub | null = null;

  async start(hub: Hub): Promise<void> {
    this.hub = hub;
  }

  async stop(): Promise<void> {
    this.hub = null;
  }

  /** A message in a room, answered: the turn's `done`. */
  async say(room: string, text: string): Promise<DonePayload> {
    const hub = this.hub!;
    const accepted = await hub.ingest({
      channel: 'relay',
      sessionKey: `relay::${room}`,
      sender: { userId: channelOwner('relay'), displayName: 'Ann' },
      text,
      mode: 'normal',
      metadata: {},
    });
    const followed = await followTurn(hub.events, accepted.sessionId, accepted.userMessageId, { replay: true });
    const outcome = await followed.outcome;
    if (outcome.kind !== 'done') throw new Error(`the turn ended ${outcome.kind}`);
    return outcome.done;
  }
}

let relay: RelayAdapter | null = null;
const relayChannel: ChannelDescriptor = defineChannel<z.infer<typeof relaySettings>>({
  name: 'relay',
  narrowBinding: '<room>',
  routingChannel: (room) => `relay:${room}`,
  config: { schema: relaySettings, env: [{ env: 'SERVICE_RELAY_ENABLED', key: 'enabled', kind: 'bool' }] },
  mode: (settings) => settings.mode,
  create: ({ settings }) => (settings.enabled ? (relay = new RelayAdapter()) : null),
});

describe('a further channel, added to the list and nowhere else', () => {
  const channels = [...CHANNELS, relayChannel];

  it('gets its own config section and variables, checked like the rest', () => {
    const dir = makeTempDir();
    const load = (env: Record<string, string>) => loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, ...env }, cwd: dir, channels });
    expect(load({ SERVICE_RELAY_ENABLED: 'yes' }).config.channels.relay).toEqual({ enabled: true, mode: 'poll' });
    expect(() => load({ SERVICE_RELAY_ENABLED: 'maybe' })).toThrow(
      new ConfigError('channels.relay.enabled (from SERVICE_RELAY_ENABLED): expected true or false, got "maybe"'),
    );
    // Without it in the list, its variable is unknown (a warning) and its section would be refused.
    expect(loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_RELAY_ENABLED: 'yes' }, cwd: dir, channels: CHANNELS }).warnings).toEqual([
      'unknown environment variable SERVICE_RELAY_ENABLED is ignored',
    ]);
  });

  it('is built, supervised, listed, bound and routed by the hub', async () => {
    const service = await startService({
      env: testEnv(makeTempDir(), { ...GENEROUS_RATE_LIMITS, SERVICE_RELAY_ENABLED: 'true' }),
      cwd: makeTempDir(),
      logDestination: new LogCapture(),
      provider: new ScriptedProvider(),
      channels,
    });
    try {
      const api = `http://127.0.0.1:${service.port}/api/v1`;
      const admin = { authorization: `Bearer ${(await registerUser(api, 'admin')).token}` };
      const listed = (await request(`${api}/admin/channels`, { headers: admin })).body.data as { name: string; status: string; mode: string }[];
      expect(listed.map(({ name, status, mode }) => ({ name, status, mode }))).toEqual([
        { name: 'slack', status: 'disabled', mode: 'events' },
        { name: 'telegram', status: 'disabled', mode: 'webhook' },
        { name: 'web', status: 'running', mode: 'rest+websocket' },
        { name: 'webchat', status: 'disabled', mode: 'socket.io' },
        { name: 'mattermost', status: 'disabled', mode: 'websocket' },
        { name: 'relay', status: 'running', mode: 'poll' },
      ]);
      const created = await request(
        `${api}/assistant/workflows`,
        jsonBody({ name: 'deploys', binding_channels: ['relay:ops'], triggers: { keywords: ['deploy'] } }, admin),
      );
      expect(created.status).toBe(201);
      const bindings = (await request(`${api}/assistant/binding-channels`, { headers: admin })).body.data as { channel: string }[];
      expect(bindings.map((entry) => entry.channel)).toEqual(['mattermost', 'relay', 'relay:ops', 'slack', 'telegram', 'web', 'webchat']);
      // The room's key routes as `relay:ops` (the descriptor's scope), where the workflow is bound.
      expect(await relay!.say('ops', 'please deploy the api')).toMatchObject({ workflow: 'deploys', routing_reason: 'trigger' });
      expect(await relay!.say('lobby', 'please deploy the api')).toMatchObject({ workflow: null, routing_reason: 'default' });
    } finally {
      await service.stop();
    }
  });
});

it('does not start without a required channel whose start fails (the web channel is one)', async () => {
  expect(byName('web').required).toBe(true);
  const broken = defineChannel<undefined>({
    name: 'broken',
    required: true,
    routingChannel: () => 'broken',
    mode: () => 'none',
    create: () => ({ name: 'broken', start: async () => Promise.reject(new Error('cannot subscribe')), stop: async () => undefined }),
  });
  const starting = startService({
    env: testEnv(makeTempDir()),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
    channels: [...CHANNELS, broken],
  });
  await expect(starting).rejects.toThrow('cannot subscribe');
});
