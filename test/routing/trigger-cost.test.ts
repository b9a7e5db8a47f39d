import path from 'node:path';
import { startService, type RunningService } from '../../src/main';
import { TRIGGER_REGEX_MAX_CHARS } from '../../src/routing/trigger-regex';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { EVENT_LOOP_BUDGET_MS, leastEventLoopDelay } from '../helpers/event-loop';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * Trigger regexes cost what a linear-time engine on a bounded prefix costs (issue 26): the patterns
 * users write (`error.*timeout`, `(urgent|asap).*(outage|down)`, `a.*b`) on 64 KiB messages, in the
 * routing test box (every regex of every workflow) and in turns, and saving a 50-regex workflow —
 * each within the event-loop budget of one request.
 */

let service: RunningService;
let api: string;
let admin: TestUser;
const provider = new ScriptedProvider();

const QUADRATIC = ['error.*timeout', '(urgent|asap).*(outage|down)', 'a.*b', '\\w+\\d+$', 'x.*y.*z'];
/** 50 patterns, each one of the quadratic shapes users write, made distinct. */
const FIFTY = Array.from({ length: 50 }, (_, index) => `${QUADRATIC[index % QUADRATIC.length]}${'.?'.repeat(Math.floor(index / QUADRATIC.length))}`);

beforeAll(async () => {
  const cwd = makeTempDir();
  service = await startService({ env: testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS), cwd, logDestination: new LogCapture(), provider });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const send = (method: string, route: string, body: unknown) =>
  request(`${api}${route}`, { ...jsonBody(body, { authorization: `Bearer ${admin.token}` }), method });

describe('trigger regexes cost a bounded amount', () => {
  it('saving (and a dry-run sync of) a 50-regex workflow keeps the event loop free', async () => {
    // Each attempt saves new patterns (never probed before): the whole cost, every time.
    const variant = (attempt: number, mark: string) => FIFTY.map((pattern) => `${pattern}${mark.repeat(attempt + 1)}`);
    const save = await leastEventLoopDelay((attempt) =>
      send('POST', '/assistant/workflows', { name: `fifty-${attempt}`, triggers: { regex: variant(attempt, '!') }, binding_channels: ['web'] }),
    );
    expect(save.result.status).toBe(201);
    expect(save.maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
    const dry = await leastEventLoopDelay((attempt) =>
      send('POST', '/assistant/workflows/sync', { workflows: [{ name: `dry-${attempt}`, triggers: { regex: variant(attempt, '#') } }], dry_run: true }),
    );
    expect(dry.result.body.data).toMatchObject({ errors: [] });
    expect(dry.maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  });

  it('POST /assistant/routing/test on a 64 KiB message runs every regex within the budget', async () => {
    // Built to provoke each pattern: the literals are there, the rest never completes a match.
    const text = `error urgent asap a x ${'a'.repeat(64 * 1024 - 40)}`;
    const { result, maxDelayMs } = await leastEventLoopDelay(() => send('POST', '/assistant/routing/test', { text, channel: 'web' }));
    expect(result.status).toBe(200);
    expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  });

  it('a turn with a 64 KiB message is routed within the budget', async () => {
    const session = await send('POST', '/sessions', {});
    const text = `error urgent asap x ${'a'.repeat(64 * 1024 - 40)}`;
    const { result, maxDelayMs } = await leastEventLoopDelay(() => send('POST', `/sessions/${session.body.data.id}/messages?sync=true`, { text }));
    expect(result.status).toBe(200);
    expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  });

  it('matches as before within the prefix, and reads only the prefix', async () => {
    const matched = await send('POST', '/assistant/routing/test', { text: 'an error, then a timeout!', channel: 'web' });
    expect(matched.body.data.workflow).toBe('fifty-0');
    const late = await send('POST', '/assistant/routing/test', { text: `${'.'.repeat(TRIGGER_REGEX_MAX_CHARS)} error timeout!`, channel: 'web' });
    expect(late.body.data.workflow).toBeNull();
  });

  it('refuses a pattern the linear-time engine cannot run, and one too costly even there', async () => {
    const lookahead = await send('POST', '/assistant/workflows', { name: 'look', triggers: { regex: ['(?=deploy)dep'] } });
    expect([lookahead.status, Object.keys(lookahead.body.error.details.fields)]).toEqual([422, ['triggers.regex.0']]);
    const costly = await leastEventLoopDelay((attempt) =>
      send('POST', '/assistant/workflows', { name: 'costly', triggers: { regex: [`(?:a.{0,40}){20}z${'!'.repeat(attempt)}`] } }),
    );
    expect(costly.result.status).toBe(422);
    expect(costly.result.body.error.details.fields['triggers.regex.0'][0].message).toMatch(/too (slow|large)/);
    expect(costly.maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  });
});
