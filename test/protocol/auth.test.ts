import { startProfileHub, testProfiles, PROFILE_START_TIMEOUT_MS, type ProfileHub } from '../helpers/hub-profiles';
import { jsonBody, request } from '../helpers/http';
import { removeTempDirs } from '../helpers/temp-dir';
import { openSocket } from '../helpers/ws-client';
import { ProtocolClient, CASE_TIMEOUT_MS } from './protocol-client';

/**
 * Authentication on both profiles: what one API process issues or revokes holds on the other at
 * once (scaled: REST on A, sockets and the second opinion on B; embedded: one process).
 */
const password = (username: string) => `pw-${username}-long-enough`;

jest.setTimeout(CASE_TIMEOUT_MS);

describe.each(testProfiles())('authentication (%s)', (profile) => {
  let hub: ProfileHub;
  let admin: ProtocolClient;

  beforeAll(async () => {
    hub = await startProfileHub(profile);
    admin = await ProtocolClient.register(hub, 'root');
  }, PROFILE_START_TIMEOUT_MS);

  afterAll(async () => {
    await hub?.stop();
    removeTempDirs();
  });

  const other = () => `${hub.apis.at(-1)}/api/v1`;
  const me = (token: string, base = other(), header = 'authorization') =>
    request(`${base}/auth/me`, { headers: { [header]: header === 'authorization' ? `Bearer ${token}` : token } });

  it('the first user is admin, the next a user; login by username or email; duplicates 409, bad bodies 422', async () => {
    expect(admin.user.role).toBe('admin');
    const user = await ProtocolClient.register(hub, 'dora');
    expect(user.user.role).toBe('user');
    const duplicate = await request(`${hub.api}/auth/register`, jsonBody({ username: 'DORA', email: 'other@example.com', password: password('dora') }));
    expect(duplicate.status).toBe(409);
    expect((await request(`${other()}/auth/register`, jsonBody({ username: 'x', email: 'nope', password: 'short' }))).status).toBe(422);
    for (const login of ['dora', 'dora@example.com']) {
      const answer = await request(`${other()}/auth/login`, jsonBody({ username: login, password: password('dora') }));
      expect(answer.status).toBe(200);
      expect(answer.body.data).toMatchObject({ token_type: 'bearer', user: { username: 'dora', role: 'user' } });
      expect((await me(answer.body.data.access_token, hub.api)).body.data.username).toBe('dora');
    }
    expect((await request(`${hub.api}/auth/login`, jsonBody({ username: 'dora', password: 'wrong-password' }))).status).toBe(401);
  });

  it('a refresh token rotates on one process and is spent on the other', async () => {
    const login = (await request(`${hub.api}/auth/login`, jsonBody({ username: 'root', password: password('root') }))).body.data;
    const rotated = await request(`${hub.api}/auth/refresh`, jsonBody({ refresh_token: login.refresh_token }));
    expect(rotated.status).toBe(200);
    expect((await me(rotated.body.data.access_token)).status).toBe(200);
    const reused = await request(`${other()}/auth/refresh`, jsonBody({ refresh_token: login.refresh_token }));
    expect(reused.status).toBe(401);
    expect((await request(`${other()}/auth/refresh`, jsonBody({ refresh_token: rotated.body.data.refresh_token }))).status).toBe(200);
  });

  it('an API key works as bearer and X-API-Key on every process and on a socket; revoked on one process, it is refused on the other and its socket closes', async () => {
    const user = await ProtocolClient.register(hub, 'erin');
    const created = await user.post('/auth/api-keys', { label: 'script' });
    expect(created.status).toBe(201);
    const key = created.body.data.key as string;
    expect(key.startsWith('svc_live_')).toBe(true);
    for (const base of hub.apis.map((url) => `${url}/api/v1`)) {
      expect((await me(key, base)).body.data.username).toBe('erin');
      expect((await me(key, base, 'x-api-key')).body.data.username).toBe('erin');
    }
    const sessionId = await user.newSession();
    const socket = await openSocket(`${hub.ws}/sessions/${sessionId}`, { headers: { authorization: `Bearer ${key}` } });
    await socket.nextOfType('agent_state');
    const listed = (await user.get('/auth/api-keys')).body.data;
    expect(listed.items.map((item: { key_prefix: string }) => item.key_prefix)).toEqual([key.slice(0, 12)]);

    expect((await user.delete(`/auth/api-keys/${created.body.data.id}`)).status).toBe(204);
    // The whole answer, so a failure shows what came instead of the 401.
    expect(await me(key)).toMatchObject({ status: 401, body: { error: { code: 'UNAUTHORIZED' } } });
    expect((await socket.closed).code).toBe(4001);
    expect((await me(user.token)).status).toBe(200); // the user's token lives on
  });

  it('a user deactivated on one process is refused on the other, and their socket closes 4001', async () => {
    const user = await ProtocolClient.register(hub, 'fay');
    const sessionId = await user.newSession();
    const socket = await user.socket(sessionId);
    expect((await admin.patch(`/users/${user.user.id}`, { is_active: false })).status).toBe(200);
    expect((await socket.closed).code).toBe(4001);
    expect((await me(user.token)).status).toBe(401);
    expect((await request(`${other()}/auth/login`, jsonBody({ username: 'fay', password: password('fay') }))).status).toBe(401);
    expect((await admin.patch(`/users/${user.user.id}`, { is_active: true })).status).toBe(200);
    expect((await me(user.token)).status).toBe(200);
  });

  it('session sockets check the credential and the owner at connect: header, subprotocol, 4001, 4003, 4004', async () => {
    const owner = await ProtocolClient.register(hub, 'gus');
    const stranger = await ProtocolClient.register(hub, 'hal');
    const sessionId = await owner.newSession();
    const viaProtocol = await openSocket(`${hub.ws}/sessions/${sessionId}`, { protocols: ['bearer', owner.token] });
    expect(viaProtocol.protocol).toBe('bearer');
    await viaProtocol.nextOfType('agent_state');
    viaProtocol.close();
    expect((await (await openSocket(`${hub.ws}/sessions/${sessionId}`)).closed).code).toBe(4001);
    expect((await (await owner.rawSocket(sessionId, '', undefined, { authorization: 'Bearer not-a-token' })).closed).code).toBe(4001);
    expect((await (await stranger.rawSocket(sessionId)).closed).code).toBe(4003);
    expect((await (await owner.rawSocket('00000000-0000-4000-8000-000000000000')).closed).code).toBe(4004);
    expect((await stranger.onOther('GET', `/sessions/${sessionId}`)).status).toBe(404);
  });

  it('logout-all on one process refuses the access tokens issued before on the other; a password change works everywhere', async () => {
    const user = await ProtocolClient.register(hub, 'ivy');
    // Access tokens carry iat in whole seconds: "issued before" is certain a second later.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await user.post('/auth/logout-all')).status).toBe(204);
    expect((await me(user.token)).status).toBe(401);
    const login = (await request(`${other()}/auth/login`, jsonBody({ username: 'ivy', password: password('ivy') }))).body.data;
    const changed = await request(
      `${hub.api}/auth/change-password`,
      jsonBody({ current_password: password('ivy'), new_password: 'a-brand-new-password' }, { authorization: `Bearer ${login.access_token}` }),
    );
    expect(changed.status).toBe(200);
    expect((await request(`${other()}/auth/login`, jsonBody({ username: 'ivy', password: password('ivy') }))).status).toBe(401);
    expect((await request(`${other()}/auth/login`, jsonBody({ username: 'ivy', password: 'a-brand-new-password' }))).status).toBe(200);
  });
});
