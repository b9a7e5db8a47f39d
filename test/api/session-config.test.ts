import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

/**
 * A session's `config` as existing clients send it (decisions.md §8): `null` means unset, PATCH
 * merges (RFC 7396), `max_steps` goes up to 200.
 */
let service: RunningService;
let api: string;
let ann: TestUser;

beforeAll(async () => {
  service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  ann = await registerUser(api, 'ann');
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const post = (body: unknown) => request(`${api}/sessions`, jsonBody(body, { authorization: `Bearer ${ann.token}` }));
const patch = (id: string, body: unknown) => request(`${api}/sessions/${id}`, { ...jsonBody(body, { authorization: `Bearer ${ann.token}` }), method: 'PATCH' });
const memory = async (id: string) => (await request(`${api}/sessions/${id}/memory`, { headers: { authorization: `Bearer ${ann.token}` } })).body.data.mode;

describe('session config', () => {
  it('takes null values on create as unset (the shape an existing client sends)', async () => {
    const created = await post({ name: 'from a client', config: { model: null, system_prompt: 'Be brief.', max_steps: null, context_compression: null } });
    expect(created.status).toBe(201);
    expect(created.body.data.config).toEqual({ system_prompt: 'Be brief.' });
  });

  it('merges a PATCH into the stored config: sent keys replace, absent keys stay, null removes', async () => {
    const id = (await post({ config: { system_prompt: 'Be brief.', max_steps: 4, context_compression: false } })).body.data.id;
    const changed = await patch(id, { config: { max_steps: 6 } });
    expect(changed.status).toBe(200);
    expect(changed.body.data.config).toEqual({ system_prompt: 'Be brief.', max_steps: 6, context_compression: false });
    const unset = await patch(id, { config: { system_prompt: null, model: null } });
    expect(unset.body.data.config).toEqual({ max_steps: 6, context_compression: false });
    // Settings saved with every key, most of them null: what is null goes, what is set stays.
    const saved = await patch(id, { name: 'renamed', config: { model: null, system_prompt: 'Again.', max_steps: null, context_compression: null } });
    expect(saved.body.data).toMatchObject({ name: 'renamed', config: { system_prompt: 'Again.' } });
    expect((await request(`${api}/sessions/${id}`, { headers: { authorization: `Bearer ${ann.token}` } })).body.data.config).toEqual({
      system_prompt: 'Again.',
    });
  });

  it('keeps the memory mode with the config: set, kept by other patches, null back to the default', async () => {
    const id = (await post({ config: { memory_mode: 'code' } })).body.data.id;
    expect(await memory(id)).toBe('code');
    await patch(id, { config: { max_steps: 2 } });
    expect(await memory(id)).toBe('code');
    await patch(id, { config: { memory_mode: null } });
    expect(await memory(id)).toBe('conversation');
  });

  it('accepts max_steps up to 200 and refuses more, naming the field', async () => {
    expect((await post({ config: { max_steps: 200 } })).body.data.config).toEqual({ max_steps: 200 });
    const refused = await post({ config: { max_steps: 201 } });
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.error.details.fields)).toEqual(['config.max_steps']);
  });

  it('still refuses unknown keys and unknown models', async () => {
    expect((await post({ config: { temperature: 2 } })).status).toBe(422);
    const id = (await post({})).body.data.id;
    const unknownModel = await patch(id, { config: { model: 'no-such-model' } });
    expect(unknownModel.status).toBe(422);
    expect(unknownModel.body.error.details.fields['config.model'][0].code).toBe('unknown_model');
  });
});
