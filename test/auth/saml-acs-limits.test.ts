import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as xmlCrypto from 'xml-crypto';
import { SAML_ACS_BODY_LIMIT_BYTES, SAML_MAX_ELEMENTS } from '../../src/auth/saml/limits';
import { SamlResponseRefused, SamlSignatureWorker, type VerifierOptions } from '../../src/auth/saml/signature-worker';
import { startAuthService, type AuthService } from '../helpers/auth-service';
import { EVENT_LOOP_BUDGET_MS, leastEventLoopDelay } from '../helpers/event-loop';
import { request } from '../helpers/http';
import { assertionXml, authnRequestId, createTestIdp, responseBase64, signAssertion, type AssertionOptions, type TestIdp } from '../helpers/saml-idp';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

// The unauthenticated assertion consumer: a size cap, refusals before any signature work, and the
// signature work itself off the event loop (node-saml in a worker thread).

const PUBLIC_URL = 'https://hub.example.test';
const ACS_URL = `${PUBLIC_URL}/api/v1/auth/saml/acs`;
const ENTRY_POINT = 'https://idp.example.test/sso';
const SP_ENTITY_ID = 'switchboard';

const idp = createTestIdp();
const attacker = createTestIdp('https://idp.example.test');
let hub: AuthService;

beforeAll(async () => {
  const configFile = path.join(makeTempDir(), 'config.yaml');
  writeFileSync(configFile, 'auth:\n  saml:\n    idp_issuer: https://idp.example.test\n');
  hub = await startAuthService({
    env: {
      SERVICE_CONFIG_FILE: configFile,
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      SERVICE_SAML_ENABLED: 'true',
      SERVICE_SAML_ENTRY_POINT: ENTRY_POINT,
      SERVICE_SAML_IDP_CERT_FILE: idp.certFile,
    },
  });
});

afterAll(async () => {
  await hub.close();
  removeTempDirs();
});

let counter = 0;
const email = () => `limits${(counter += 1)}_${process.pid}@corp.example.test`;

async function startLogin(): Promise<string> {
  const response = await fetch(`${hub.api}/auth/saml/login`, { redirect: 'manual' });
  return authnRequestId(response.headers.get('location')!);
}

/** `count` extra attributes of ~`size` bytes each, as an IdP sends group memberships. */
function groups(count: number, size = 60): string {
  let xml = '';
  for (let index = 0; index < count; index += 1) {
    xml += `<saml:Attribute Name="group${index}"><saml:AttributeValue>${'g'.repeat(size)}</saml:AttributeValue></saml:Attribute>`;
  }
  return xml;
}

/** A signed response; `extra` goes into the AttributeStatement before signing. */
function response(options: AssertionOptions, signer: TestIdp = idp, extra = '', responseIssuer = idp): string {
  const assertion = assertionXml(idp, options).replace('</saml:AttributeStatement>', `${extra}</saml:AttributeStatement>`);
  return responseBase64(responseIssuer, signAssertion(assertion, signer.keyPem, signer.certPem), { destination: ACS_URL, inResponseTo: options.inResponseTo });
}

const post = (samlResponse: string) =>
  request(`${hub.api}/auth/saml/acs`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
  });

/** The reasons logged for refused responses since `from` (a log line index). */
const reasonsSince = (from: number) =>
  hub.logs.lines
    .slice(from)
    .map((line) => JSON.parse(line) as { msg?: string; reason?: string })
    .filter((entry) => entry.msg === 'SAML response refused')
    .map((entry) => entry.reason);

describe('SAML assertion consumer limits', () => {
  it(`refuses a body over ${SAML_ACS_BODY_LIMIT_BYTES / 1024} KiB with 413 before reading it, and accepts a large real response`, async () => {
    const refused = await post('PHNhbWxwOlJlc3BvbnNl'.repeat(Math.ceil(SAML_ACS_BODY_LIMIT_BYTES / 20) + 1));
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(refused.body.error.details.limit_bytes).toBe(SAML_ACS_BODY_LIMIT_BYTES);
    // An IdP listing 800 groups (~120 KB of XML) is still well inside the limit.
    const address = email();
    const large = response({ email: address, audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin() }, idp, groups(800, 80));
    expect(large.length).toBeGreaterThan(150_000);
    const accepted = await post(large);
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.user.email).toBe(address);
  });

  it('refuses an unknown or missing InResponseTo, another Response issuer, or a non-Response, before the signature check', async () => {
    const from = hub.logs.lines.length;
    const base = { audience: SP_ENTITY_ID, recipient: ACS_URL };
    for (const samlResponse of [
      response({ ...base, email: email(), inResponseTo: '_never-issued' }, attacker, groups(100)),
      response({ ...base, email: email() }, attacker),
      response({ ...base, email: email(), inResponseTo: await startLogin() }, attacker, '', createTestIdp('https://evil.example.test')),
      Buffer.from('<samlp:LogoutResponse xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>').toString('base64'),
      Buffer.from('not xml at all').toString('base64'),
    ]) {
      const answer = await post(samlResponse);
      expect({ status: answer.status, code: answer.body.error.code, message: answer.body.error.message }).toEqual({
        status: 401,
        code: 'UNAUTHORIZED',
        message: 'The SAML response is not valid.',
      });
    }
    expect(reasonsSince(from)).toEqual([
      'InResponseTo is not a request this service issued (or it was answered already) (refused before the signature check)',
      'InResponseTo is missing (refused before the signature check)',
      'the Response Issuer is not the configured IdP (refused before the signature check)',
      'the document is a LogoutResponse, not a Response (refused before the signature check)',
      'not base64-encoded XML (refused before the signature check)',
    ]);
  });

  it(`refuses a forged response of more than ${SAML_MAX_ELEMENTS} elements before the signature check, while genuine logins go on`, async () => {
    const from = hub.logs.lines.length;
    // ~32,000 sibling elements in ~190 KB, with a genuine InResponseTo: kept the worker busy past its timeout.
    const forged = response({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin() }, attacker, '<x/>'.repeat(32_000));
    const address = email();
    // A genuine response is good for one login: each attempt of the measurement (a stalled machine repeats it) gets its own.
    const genuine = async () => response({ email: address, audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin() });
    const { result, maxDelayMs } = await leastEventLoopDelay(async () => {
      const login = await genuine();
      return Promise.all([post(forged), post(forged), post(login)]);
    });
    expect(result.map((answer) => answer.status)).toEqual([401, 401, 200]);
    expect(result[2]!.body.data.user.email).toBe(address);
    expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
    expect(reasonsSince(from)).toContain(`the document has more than ${SAML_MAX_ELEMENTS} elements (refused before the signature check)`);
    const deep = response(
      { email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin() },
      attacker,
      `${'<x>'.repeat(100)}${'</x>'.repeat(100)}`,
    );
    expect((await post(deep)).status).toBe(401);
    expect(reasonsSince(from)).toContain('the document nests elements deeper than 64 levels (refused before the signature check)');
  });

  it('verifies signatures off the main thread: xml-crypto never runs on the event loop, and logins still work', async () => {
    const checkSignature = jest.spyOn(xmlCrypto.SignedXml.prototype, 'checkSignature');
    try {
      const address = email();
      const accepted = await post(response({ email: address, audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin() }));
      expect(accepted.status).toBe(200);
      expect(accepted.body.data.user.email).toBe(address);
      const forged = await post(
        response({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await startLogin() }, attacker, groups(500)),
      );
      expect(forged.status).toBe(401);
      expect(checkSignature).not.toHaveBeenCalled();
    } finally {
      checkSignature.mockRestore();
    }
  });
});

describe('SamlSignatureWorker', () => {
  const options: VerifierOptions = {
    entryPoint: ENTRY_POINT,
    issuer: SP_ENTITY_ID,
    audience: SP_ENTITY_ID,
    idpCert: readFileSync(idp.certFile, 'utf8'),
    callbackUrl: ACS_URL,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: 'never' as VerifierOptions['validateInResponseTo'],
  };
  const noCache = { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null };
  const valid = () => response({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL });

  it('returns the validated profile with its assertion, and refuses a bad signature with the reason', async () => {
    const verifier = new SamlSignatureWorker(options, noCache);
    try {
      const { profile } = await verifier.verify(valid());
      expect(profile!.nameID).toMatch(/@corp\.example\.test$/);
      expect((profile!.getAssertion!() as { Assertion: { $: { ID: string } } }).Assertion.$.ID).toMatch(/^_/);
      await expect(verifier.verify(response({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL }, attacker))).rejects.toThrow(SamlResponseRefused);
    } finally {
      await verifier.close();
    }
  });

  it('answers 503 beyond its queue, and gives up a check past its timeout, then works again', async () => {
    const saturated = new SamlSignatureWorker(options, noCache, { timeoutMs: 10_000, maxPending: 1, maxHeapMb: 128 });
    try {
      const first = saturated.verify(valid());
      await expect(saturated.verify(valid())).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '5' } });
      await expect(first).resolves.toMatchObject({ loggedOut: false });
    } finally {
      await saturated.close();
    }
    const limits = { timeoutMs: 1, maxPending: 8, maxHeapMb: 128 };
    const impatient = new SamlSignatureWorker(options, noCache, limits);
    try {
      await expect(impatient.verify(valid())).rejects.toThrow('the signature check took longer than 1 ms');
      // The stopped worker is replaced on the next call.
      limits.timeoutMs = 10_000;
      await expect(impatient.verify(valid())).resolves.toMatchObject({ loggedOut: false });
    } finally {
      await impatient.close();
    }
  });

  /** A validly shaped response the checks take seconds over (quadratic in siblings), as a worker sees it. */
  const slow = () => response({ email: email(), audience: SP_ENTITY_ID, recipient: ACS_URL }, attacker, '<x/>'.repeat(16_000));

  it('times a slow check out alone: the checks queued behind it go on (its worker is replaced)', async () => {
    const verifier = new SamlSignatureWorker(options, noCache, { timeoutMs: 1_000, maxPending: 8, maxHeapMb: 128, workers: 1 });
    try {
      const stuck = verifier.verify(slow());
      const behind = [verifier.verify(valid()), verifier.verify(valid())];
      await expect(stuck).rejects.toThrow('the signature check took longer than 1000 ms');
      await expect(Promise.all(behind)).resolves.toEqual([expect.objectContaining({ loggedOut: false }), expect.objectContaining({ loggedOut: false })]);
    } finally {
      await verifier.close();
    }
  }, 30_000);

  it('checks more than one response at a time: a genuine login is not held behind a slow one', async () => {
    const verifier = new SamlSignatureWorker(options, noCache, { timeoutMs: 20_000, maxPending: 8, maxHeapMb: 128, workers: 2 });
    try {
      const order: string[] = [];
      const stuck = verifier.verify(slow()).then(
        () => order.push('slow'),
        () => order.push('slow'),
      );
      await verifier.verify(valid()).then(() => order.push('genuine'));
      await stuck;
      expect(order).toEqual(['genuine', 'slow']);
    } finally {
      await verifier.close();
    }
  }, 40_000);
});
