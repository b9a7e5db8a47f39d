import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService } from '../../../src/main';
import { ConfigError } from '../../../src/config';
import { ScriptedProvider } from '../../fakes/scripted-provider';
import { testEnv } from '../../helpers/env';
import { LogCapture } from '../../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir';

/** Startup refuses a Slack channel that cannot work, naming the missing setting. */
afterAll(() => removeTempDirs());

async function startWith(env: Record<string, string>, yaml = ''): Promise<unknown> {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), yaml);
  try {
    const service = await startService({ env: testEnv(makeTempDir(), env), cwd, logDestination: new LogCapture(), provider: new ScriptedProvider() });
    await service.stop();
    return null;
  } catch (error) {
    return error;
  }
}

it('refuses events mode without a signing secret', async () => {
  const error = await startWith({ SERVICE_SLACK_BOT_TOKEN: 'xoxb-1' });
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(/^SERVICE_SLACK_SIGNING_SECRET: /);
});

it('refuses socket mode without an app token', async () => {
  const error = await startWith({ SERVICE_SLACK_BOT_TOKEN: 'xoxb-1' }, 'channels:\n  slack:\n    mode: socket\n');
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toMatch(/^SERVICE_SLACK_APP_TOKEN: /);
});

it('refuses channels.slack.enabled without a bot token, and starts without Slack when it is off', async () => {
  const error = await startWith({}, 'channels:\n  slack:\n    enabled: true\n');
  expect((error as Error).message).toMatch(/^SERVICE_SLACK_BOT_TOKEN: /);
  expect(await startWith({})).toBeNull();
});

describe('SERVICE_SLACK_MODE (it used to be ignored as an unknown variable)', () => {
  it('socket from the environment needs the app token, not the signing secret', async () => {
    const error = await startWith({ SERVICE_SLACK_BOT_TOKEN: 'xoxb-1', SERVICE_SLACK_MODE: 'socket' });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^SERVICE_SLACK_APP_TOKEN: is required for Slack Socket Mode \(SERVICE_SLACK_MODE=socket\)/);
  });

  it('overrides config.yaml', async () => {
    const error = await startWith({ SERVICE_SLACK_BOT_TOKEN: 'xoxb-1', SERVICE_SLACK_MODE: 'events' }, 'channels:\n  slack:\n    mode: socket\n');
    expect((error as Error).message).toMatch(/^SERVICE_SLACK_SIGNING_SECRET: /);
  });

  it('refuses a value that is not a mode, naming the variable', async () => {
    const error = await startWith({ SERVICE_SLACK_BOT_TOKEN: 'xoxb-1', SERVICE_SLACK_MODE: 'websocket' });
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/channels\.slack\.mode \(from SERVICE_SLACK_MODE\)/);
  });
});
