import { auditRows } from '../helpers/audit';
import { createVerify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolveSamlSettings } from '../../src/auth/saml/settings';
import { ConfigError, loadConfig } from '../../src/config';
import { TEST_JWT_SECRET } from '../helpers/env';
import path from 'node:path';
import { bearer, register, startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { assertionXml, authnRequestId, createTestIdp, responseBase64, signAssertion, type AssertionOptions } from '../helpers/saml-idp';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

const PUBLIC_URL = 'https://hub.example.test';
const ACS_URL = `${PUBLIC_URL}/api/v1/auth/saml/acs`;
const ENTRY_POINT = 'https://idp.example.test/sso';
const SP_ENTITY_ID = 'switchboard';

const idp = createTestIdp();
const attacker = createTestIdp('https://idp.example.test');
let hub: AuthService;
let plain: AuthService;
/** Accepts IdP-initiated logins (no InResponseTo): only the replay cache stops a replay there. */
let idpInitiated: AuthService;
/** Signs its AuthnRequests with its own key. */
let signing: AuthService;
/** The hub's admin (registered first), who reads the audit trail. */
let adminToken: string;
const sp = createTestIdp('switchboard');

beforeAll(async () => {
  const configDir = makeTempDir();
  const configFile = path.join(configDir, 'config.yaml');
  writeFileSync(configFile, 'auth:\n  saml:\n    role_attribute: role\n    idp_issuer: https://idp.example.test\n');
  hub = await startAuthService({
    env: {
      SERVICE_CONFIG_FILE: configFile,
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      SERVICE_SAML_ENABLED: 'true',
      SERVICE_SAML_ENTRY_POINT: ENTRY_POINT,
      SERVICE_SAML_IDP_CERT_FILE: idp.certFile,
    },
  });
  plain = await startAuthService();
  const idpInitiatedConfig = path.join(configDir, 'idp-initiated.yaml');
  writeFileSync(idpInitiatedConfig, 'auth:\n  saml:\n    validate_in_response_to: ifPresent\n');
  idpInitiated = await startAuthService({
    env: {
      SERVICE_CONFIG_FILE: idpInitiatedConfig,
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      SERVICE_SAML_ENABLED: 'true',
      SERVICE_SAML_ENTRY_POINT: ENTRY_POINT,
      SERVICE_SAML_IDP_CERT: idp.certPem,
    },
  });
  signing = await startAuthService({
    env: {
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      SERVICE_SAML_ENABLED: 'true',
      SERVICE_SAML_ENTRY_POINT: ENTRY_POINT,
      SERVICE_SAML_IDP_CERT: idp.certPem,
      SERVICE_SAML_PRIVATE_KEY: sp.keyPem,
      SERVICE_SAML_SP_CERT_FILE: sp.certFile,
    },
  });
  // The first user is admin by registration; SAML users come after.
  const registered = await register(hub.api);
  expect(registered.body.data.user.role).toBe('admin');
  adminToken = registered.body.data.access_token;
});

afterAll(async () => {
  await hub.close();
  await plain.close();
  await idpInitiated.close();
  await signing.close();
  removeTempDirs();
});

let counter = 0;
function email(): string {
  counter += 1;
  return `sso${counter}_${process.pid}@corp.example.test`;
}

/** Starts a login at the hub (as a browser would) and returns the AuthnRequest ID to answer. */
async function startLogin(): Promise<string> {
  const response = await fetch(`${hub.api}/auth/saml/login`, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = response.headers.get('location')!;
  expect(location.startsWith(`${ENTRY_POINT}?`)).toBe(true);
  return authnRequestId(location);
}

async function goodOptions(overrides: Partial<AssertionOptions> = {}): Promise<AssertionOptions> {
  return { email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin(), ...overrides };
}

function signedResponse(options: AssertionOptions, signer = idp): string {
  const signed = signAssertion(assertionXml(idp, options), signer.keyPem, signer.certPem);
  return responseBase64(idp, signed, { destination: ACS_URL, inResponseTo: options.inResponseTo });
}

/** Every token the hub handed out and every SAMLResponse posted: none may reach a log line. */
const secrets: string[] = [];

async function postAcs(samlResponse: string, accept = 'application/json') {
  secrets.push(samlResponse);
  const response = await request(`${hub.api}/auth/saml/acs`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
    body: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: 'r' }).toString(),
  });
  if (response.status === 200) secrets.push(response.body.data.access_token, response.body.data.refresh_token);
  return response;
}

async function expectRefused(samlResponse: string): Promise<void> {
  const response = await postAcs(samlResponse);
  expect({ status: response.status, code: response.body.error?.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  expect(response.body.error.message).toBe('The SAML response is not valid.');
}

async function userExists(address: string): Promise<boolean> {
  const [rows] = await hub.database.sequelize.query('SELECT id FROM users WHERE email = :address', { replacements: { address } });
  return rows.length > 0;
}

describe('SAML configuration', () => {
  const load = (yamlText: string, env: Record<string, string> = {}) => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, 'config.yaml'), yamlText);
    return loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, ...env }, cwd: dir }).config;
  };
  const refusal = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a configuration error');
  };

  it('is off by default, and refuses an enabled one without entry point or IdP certificate', () => {
    expect(resolveSamlSettings(load('').auth.saml, PUBLIC_URL)).toBeNull();
    expect(refusal(() => resolveSamlSettings(load('auth:\n  saml:\n    enabled: true\n').auth.saml, PUBLIC_URL))).toMatch(
      /^auth\.saml\.entry_point: is required/,
    );
    const noCert = load(`auth:\n  saml:\n    enabled: true\n    entry_point: ${ENTRY_POINT}\n`).auth.saml;
    expect(refusal(() => resolveSamlSettings(noCert, PUBLIC_URL))).toMatch(/^auth\.saml\.idp_cert: /);
    const missingFile = load(`auth:\n  saml:\n    enabled: true\n    entry_point: ${ENTRY_POINT}\n    idp_cert_file: /nonexistent.pem\n`).auth.saml;
    expect(refusal(() => resolveSamlSettings(missingFile, PUBLIC_URL))).toMatch(/^auth\.saml\.idp_cert_file: cannot read/);
  });

  it('takes the private key from the environment only, and never echoes it', () => {
    expect(refusal(() => load('auth:\n  saml:\n    private_key: "-----BEGIN PRIVATE KEY-----"\n'))).toMatch(/set SERVICE_SAML_PRIVATE_KEY instead/);
    const config = load(`auth:\n  saml:\n    enabled: true\n    entry_point: ${ENTRY_POINT}\n`, {
      SERVICE_SAML_IDP_CERT: idp.certPem,
      SERVICE_SAML_PRIVATE_KEY: 'not-a-key-CANARY-91c3',
    });
    const message = refusal(() => resolveSamlSettings(config.auth.saml, PUBLIC_URL));
    expect(message).toMatch(/^SERVICE_SAML_PRIVATE_KEY: not a PEM private key/);
    expect(message).not.toContain('CANARY');
  });
});

describe('SAML not configured', () => {
  it('answers 503 SAML_NOT_CONFIGURED on every SAML endpoint', async () => {
    for (const response of [
      await request(`${plain.api}/auth/saml/metadata`),
      await request(`${plain.api}/auth/saml/login`, { redirect: 'manual' }),
      await request(`${plain.api}/auth/saml/acs`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'SAMLResponse=x' }),
    ]) {
      expect({ status: response.status, code: response.body.error.code }).toEqual({ status: 503, code: 'SAML_NOT_CONFIGURED' });
    }
  });

  it('says so at GET /auth/methods, which the sign-in page reads to hide its SAML link', async () => {
    expect((await request(`${plain.api}/auth/methods`)).body.data).toEqual({ password: true, saml: false });
    expect((await request(`${hub.api}/auth/methods`)).body.data).toEqual({ password: true, saml: true });
  });
});

describe('SAML service provider', () => {
  it('publishes SP metadata with our entity ID and assertion consumer URL', async () => {
    const response = await fetch(`${hub.api}/auth/saml/metadata`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/samlmetadata\+xml/);
    const xml = await response.text();
    expect(xml).toContain(`entityID="${SP_ENTITY_ID}"`);
    expect(xml).toContain(`Location="${ACS_URL}"`);
  });

  it('signs login requests when it has a key, and publishes its certificate', async () => {
    const response = await fetch(`${signing.api}/auth/saml/login?relay_state=back`, { redirect: 'manual' });
    const location = response.headers.get('location')!;
    const query = location.slice(location.indexOf('?') + 1);
    const parts = query.split('&');
    const signature = parts.find((part) => part.startsWith('Signature='));
    expect(signature).toBeDefined();
    // HTTP-Redirect binding: the signature covers SAMLRequest, RelayState and SigAlg as sent.
    const signed = parts.filter((part) => !part.startsWith('Signature=')).join('&');
    const verifier = createVerify('RSA-SHA256').update(signed);
    expect(verifier.verify(sp.certPem, decodeURIComponent(signature!.slice('Signature='.length)), 'base64')).toBe(true);
    const unsigned = await fetch(`${hub.api}/auth/saml/login`, { redirect: 'manual' });
    expect(unsigned.headers.get('location')).not.toContain('Signature=');
    const metadata = await (await fetch(`${signing.api}/auth/saml/metadata`)).text();
    const certBody = sp.certPem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    expect(metadata.replace(/\s+/g, '')).toContain(certBody);
    expect(signing.logs.text).not.toContain(sp.keyPem.split('\n')[1]);
  });

  it('accepts a valid signed assertion once, provisions the user, and refuses the replay', async () => {
    const options = await goodOptions();
    const samlResponse = signedResponse(options);
    const accepted = await postAcs(samlResponse);
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ token_type: 'bearer', user: { email: options.email, role: 'user', is_active: true } });
    const me = await request(`${hub.api}/auth/me`, bearer(accepted.body.data.access_token));
    expect(me.body.data.email).toBe(options.email);
    await expectRefused(samlResponse);
  });

  it('remembers assertion IDs: an IdP-initiated assertion (no InResponseTo) is accepted once', async () => {
    const samlResponse = signedResponse({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL });
    const post = () =>
      request(`${idpInitiated.api}/auth/saml/acs`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
      });
    expect((await post()).status).toBe(200);
    const replay = await post();
    expect({ status: replay.status, code: replay.body.error?.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    const replays = idpInitiated.logs.entries().filter((entry) => entry.msg === 'SAML response refused');
    expect(replays.map((entry) => entry.reason)).toEqual(['assertion ID already used (replay)']);
  });

  it('finds the same user on the next login and maps the role attribute', async () => {
    const address = email();
    const first = await postAcs(signedResponse(await goodOptions({ email: address })));
    const second = await postAcs(signedResponse(await goodOptions({ email: address, role: 'admin' })));
    expect(second.body.data.user.id).toBe(first.body.data.user.id);
    expect(second.body.data.user.role).toBe('admin');
    const third = await postAcs(signedResponse(await goodOptions({ email: address, role: 'user' })));
    expect(third.body.data.user.role).toBe('user');
  });

  /** A browser's ACS post: the 302 and the fragment it leads to. */
  async function browserLogin(relayState: string): Promise<URLSearchParams> {
    const response = await fetch(`${hub.api}/auth/saml/acs`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ SAMLResponse: signedResponse(await goodOptions()), RelayState: relayState }).toString(),
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(`${PUBLIC_URL}/`);
    return new URLSearchParams(location.hash.slice(1));
  }
  const exchange = (body: unknown, headers: Record<string, string> = {}) =>
    request(`${hub.api}/auth/saml/exchange`, { ...jsonBody(body, headers), method: 'POST' });

  it('redirects a browser to the web UI with a one-time code bound to its RelayState, never tokens (login CSRF)', async () => {
    const fragment = await browserLogin('nonce-of-this-browser');
    expect([...fragment.keys()].sort()).toEqual(['saml_code', 'state']);
    expect(fragment.get('state')).toBe('nonce-of-this-browser');
    const code = fragment.get('saml_code')!;
    // Another state (a link made for someone else's browser) does not open it.
    expect((await exchange({ code, state: 'another-nonce' })).status).toBe(401);
    const pair = await exchange({ code, state: 'nonce-of-this-browser' });
    expect(pair.status).toBe(200);
    expect((await request(`${hub.api}/auth/me`, bearer(pair.body.data.access_token))).status).toBe(200);
    // Once only.
    expect((await exchange({ code, state: 'nonce-of-this-browser' })).status).toBe(401);
  });

  it('hands the refresh token of an exchanged code to a browser as an HttpOnly cookie when asked', async () => {
    const fragment = await browserLogin('cookie-nonce');
    const pair = await exchange({ code: fragment.get('saml_code'), state: 'cookie-nonce' }, { 'x-switchboard-refresh': 'cookie' });
    expect(pair.status).toBe(200);
    expect(pair.body.data.refresh_token).toBeNull();
    expect(String(pair.headers.get('set-cookie'))).toMatch(
      /^switchboard_refresh=[^;]+; Max-Age=\d+; Path=\/api\/v1\/auth\/refresh; Expires=[^;]+; HttpOnly; (Secure; )?SameSite=Strict$/,
    );
  });

  it('refuses an unsigned assertion', async () => {
    const options = await goodOptions();
    await expectRefused(responseBase64(idp, assertionXml(idp, options), { destination: ACS_URL, inResponseTo: options.inResponseTo }));
    expect(await userExists(options.email)).toBe(false);
  });

  it('refuses an assertion signed by another key', async () => {
    const options = await goodOptions();
    await expectRefused(signedResponse(options, attacker));
    expect(await userExists(options.email)).toBe(false);
  });

  it('refuses a wrapped (XSW) response: a forged assertion beside or around the signed one', async () => {
    const evilEmail = email();
    /** A genuine signed assertion and a forged one, both answering a fresh request of ours. */
    const pair = async () => {
      const inResponseTo = await startLogin();
      const genuine = signAssertion(assertionXml(idp, { email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo }), idp.keyPem, idp.certPem);
      const evil = assertionXml(idp, { email: evilEmail, audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo });
      return { inResponseTo, genuine, evil };
    };
    // XSW1-style: forged assertion first, the signed one after it.
    const beside = await pair();
    await expectRefused(responseBase64(idp, beside.evil + beside.genuine, { destination: ACS_URL, inResponseTo: beside.inResponseTo }));
    // XSW2-style: the signed assertion hidden inside the forged one (an Advice element).
    const inside = await pair();
    const nested = inside.evil.replace('</saml:Subject>', `</saml:Subject><saml:Advice>${inside.genuine}</saml:Advice>`);
    await expectRefused(responseBase64(idp, nested, { destination: ACS_URL, inResponseTo: inside.inResponseTo }));
    // The forged assertion takes the signed one's ID and steals its Signature element.
    const stolen = await pair();
    const id = /ID="([^"]+)"/.exec(stolen.genuine)![1]!;
    const signatureElement = /<ds:Signature[\s\S]*<\/ds:Signature>|<Signature[\s\S]*<\/Signature>/.exec(stolen.genuine)![0];
    const forged = stolen.evil.replace(/ID="[^"]+"/, `ID="${id}"`).replace(/(<saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${signatureElement}`);
    await expectRefused(responseBase64(idp, forged, { destination: ACS_URL, inResponseTo: stolen.inResponseTo }));
    expect(await userExists(evilEmail)).toBe(false);
    // Control: a genuine assertion made the same way, sent alone, is accepted.
    const control = await pair();
    expect((await postAcs(responseBase64(idp, control.genuine, { destination: ACS_URL, inResponseTo: control.inResponseTo }))).status).toBe(200);
  });

  it('records sign-ins, refusals (with the failed check) and role changes from the IdP in the audit trail', async () => {
    const address = email();
    const first = await postAcs(signedResponse(await goodOptions({ email: address })));
    await postAcs(signedResponse(await goodOptions({ email: address, role: 'admin' })));
    await expectRefused(signedResponse(await goodOptions({ audience: 'yet-another-sp' })));
    const userId = first.body.data.user.id;
    const logins = await auditRows(hub.api, adminToken, { kind: 'saml.login', actor: `user:${userId}` }, 2);
    expect(logins.map((row) => [row.action, row.details.role])).toEqual([
      ['login', 'admin'],
      ['login', 'user'],
    ]);
    const [roleChange] = await auditRows(hub.api, adminToken, { kind: 'user.changed', actor: 'system:saml' });
    expect(roleChange).toMatchObject({ subject: userId, action: 'role:admin', details: { role_before: 'user', from: 'idp_attribute' } });
    const refusals = await auditRows(hub.api, adminToken, { kind: 'saml.refused' }, 1, (row) => /audience/i.test(row.details.reason));
    expect(refusals.find((row) => /audience/i.test(row.details.reason))).toMatchObject({ actor: { key: 'system:saml' }, action: 'refused' });
  });

  it('refuses a response with a DTD, even around a genuine signed assertion', async () => {
    const options = await goodOptions();
    const genuine = Buffer.from(signedResponse(options), 'base64').toString('utf8');
    await expectRefused(Buffer.from(`<!DOCTYPE samlp:Response>${genuine}`).toString('base64'));
    expect(await userExists(options.email)).toBe(false);
    const reasons = hub.logs
      .entries()
      .filter((entry) => entry.msg === 'SAML response refused')
      .map((entry) => entry.reason);
    expect(reasons).toContain('the document has a DTD (DOCTYPE), which SAML responses never carry (refused before the signature check)');
  });

  it('refuses a wrong audience', async () => {
    await expectRefused(signedResponse(await goodOptions({ audience: 'some-other-sp' })));
  });

  it('refuses a wrong recipient', async () => {
    await expectRefused(signedResponse(await goodOptions({ recipient: 'https://evil.example.test/acs' })));
  });

  it('refuses an expired assertion', async () => {
    await expectRefused(signedResponse(await goodOptions({ validForS: -120 })));
  });

  it('refuses another issuer', async () => {
    await expectRefused(signedResponse(await goodOptions({ issuer: 'https://other-idp.example.test' })));
  });

  it('refuses an InResponseTo we never sent, a missing one, and a request answered twice', async () => {
    await expectRefused(signedResponse(await goodOptions({ inResponseTo: '_never-sent' })));
    await expectRefused(signedResponse(await goodOptions({ inResponseTo: undefined })));
    const requestId = await startLogin();
    expect((await postAcs(signedResponse({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: requestId }))).status).toBe(200);
    await expectRefused(signedResponse({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: requestId }));
  });

  it('refuses an inactive user', async () => {
    const address = email();
    const first = await postAcs(signedResponse(await goodOptions({ email: address })));
    await hub.database.sequelize.query('UPDATE users SET is_active = :off WHERE id = :id', { replacements: { off: false, id: first.body.data.user.id } });
    await expectRefused(signedResponse(await goodOptions({ email: address })));
  });

  it('answers bad input with the envelope: 401 for garbage, 422 without SAMLResponse, 415 for JSON', async () => {
    await expectRefused(Buffer.from('<not-saml/>').toString('base64'));
    await expectRefused('%%% not base64 %%%');
    const missing = await request(`${hub.api}/auth/saml/acs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'RelayState=x',
    });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.error.details.fields)).toEqual(['SAMLResponse']);
    const json = await request(`${hub.api}/auth/saml/acs`, jsonBody({ SAMLResponse: 'x' }));
    expect(json.status).toBe(415);
  });

  it('logs no SAMLResponse and no token it issued (run last)', () => {
    expect(secrets.length).toBeGreaterThan(20);
    const leaked = secrets.filter((secret) => hub.logs.text.includes(secret) || hub.logs.text.includes(encodeURIComponent(secret)));
    expect(leaked).toEqual([]);
    expect(hub.logs.text).not.toContain('PHNhbWxwOlJlc3BvbnNl'); // base64 of "<samlp:Response"
  });
});
