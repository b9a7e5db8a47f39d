import { randomBytes } from 'node:crypto';
import { startService, type RunningService } from '../../../src/main';
import { FakeSlackApi } from '../../fakes/slack-api';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../../helpers/auth-service';
import { testEnv } from '../../helpers/env';
import { request } from '../../helpers/http';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';
import { registerUser } from '../../helpers/users';

/** Slack's "test connection" (issue 33): auth.test with the bot token; a refusal names the variable to fix. */
const BOT_TOKEN = `xoxb-${randomBytes(8).toString('hex')}`;
let slack: FakeSlackApi;
let service: RunningService;
let base: string;
let admin: Record<string, string>;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  service = await startService({
    env: testEnv(makeTempDir(), {
      ...GENEROUS_RATE_LIMITS,
      SERVICE_SLACK_BOT_TOKEN: BOT_TOKEN,
      SERVICE_SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
      SERVICE_SLACK_API_URL: slack.url,
    }),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  base = `http://127.0.0.1:${service.port}/api/v1`;
  admin = { authorization: `Bearer ${(await registerUser(base, 'root')).token}` };
});

afterAll(async () => {
  await service?.stop();
  await slack?.stop();
  removeTempDirs();
});

const test = () => request(`${base}/admin/channels/slack/test`, { method: 'POST', headers: admin });

it('says Slack accepts the token, naming the bot and the workspace', async () => {
  expect((await test()).body.data).toEqual({
    channel: 'slack',
    enabled: true,
    ok: true,
    detail: 'Slack accepts the bot token: switchboard in Acme.',
    variable: null,
  });
});

it('names SERVICE_SLACK_BOT_TOKEN when Slack refuses the token, and never shows it', async () => {
  slack.refusedTokens.add(BOT_TOKEN);
  try {
    const answer = await test();
    expect(answer.body.data).toEqual({
      channel: 'slack',
      enabled: true,
      ok: false,
      detail: 'Slack refused the bot token (invalid_auth).',
      variable: 'SERVICE_SLACK_BOT_TOKEN',
    });
    expect(JSON.stringify(answer.body)).not.toContain(BOT_TOKEN);
  } finally {
    slack.refusedTokens.delete(BOT_TOKEN);
  }
});
