import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { makeTempDir } from './temp-dir';

/** A throw-away identity provider: its own RSA key and self-signed certificate (openssl CLI). */
export interface TestIdp {
  entityId: string;
  keyPem: string;
  certPem: string;
  certFile: string;
}

export function createTestIdp(entityId = 'https://idp.example.test'): TestIdp {
  const dir = makeTempDir('switchboard-idp-');
  const keyFile = path.join(dir, 'idp.key');
  const certFile = path.join(dir, 'idp.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=test-idp'], {
    stdio: 'ignore',
  });
  return { entityId, keyPem: readFileSync(keyFile, 'utf8'), certPem: readFileSync(certFile, 'utf8'), certFile };
}

export interface AssertionOptions {
  email: string;
  audience: string;
  recipient: string;
  inResponseTo?: string;
  /** Seconds from now; negative for an expired assertion. */
  validForS?: number;
  role?: string;
  assertionId?: string;
  issuer?: string;
}

const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SAMLP_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';

export function assertionXml(idp: TestIdp, options: AssertionOptions): string {
  const now = Date.now();
  const iso = (offsetS: number) => new Date(now + offsetS * 1000).toISOString();
  const until = iso(options.validForS ?? 300);
  const inResponseTo = options.inResponseTo ? ` InResponseTo="${options.inResponseTo}"` : '';
  const role = options.role ? `<saml:Attribute Name="role"><saml:AttributeValue>${options.role}</saml:AttributeValue></saml:Attribute>` : '';
  return (
    `<saml:Assertion xmlns:saml="${SAML_NS}" ID="${options.assertionId ?? `_${randomUUID()}`}" Version="2.0" IssueInstant="${iso(-5)}">` +
    `<saml:Issuer>${options.issuer ?? idp.entityId}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${options.email}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData NotOnOrAfter="${until}" Recipient="${options.recipient}"${inResponseTo}/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${iso(-600)}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${options.audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(-5)}" SessionIndex="_${randomUUID()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>${options.email}</saml:AttributeValue></saml:Attribute>${role}</saml:AttributeStatement>` +
    `</saml:Assertion>`
  );
}

/** Signs the (root) Assertion element with the IdP's key: enveloped, exclusive c14n, RSA-SHA256. */
export function signAssertion(xml: string, keyPem: string, certPem: string): string {
  const signature = new SignedXml({
    privateKey: keyPem,
    publicCert: certPem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  signature.addReference({
    xpath: "/*[local-name(.)='Assertion']",
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
  });
  signature.computeSignature(xml, {
    location: { reference: "/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' },
  });
  return signature.getSignedXml();
}

/** Wraps assertion XML (signed or not; or anything else) in a Response document. */
export function responseXml(idp: TestIdp, assertions: string, options: { destination: string; inResponseTo?: string }): string {
  const inResponseTo = options.inResponseTo ? ` InResponseTo="${options.inResponseTo}"` : '';
  return (
    `<samlp:Response xmlns:samlp="${SAMLP_NS}" xmlns:saml="${SAML_NS}" ID="_${randomUUID()}" Version="2.0" IssueInstant="${new Date().toISOString()}" Destination="${options.destination}"${inResponseTo}>` +
    `<saml:Issuer>${idp.entityId}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    assertions +
    `</samlp:Response>`
  );
}

/** `responseXml`, base64-encoded as the form field carries it. */
export function responseBase64(idp: TestIdp, assertions: string, options: { destination: string; inResponseTo?: string }): string {
  return Buffer.from(responseXml(idp, assertions, options)).toString('base64');
}

/** The AuthnRequest ID inside a redirect URL's SAMLRequest (deflated, base64). */
export function authnRequestId(location: string): string {
  const encoded = new URL(location).searchParams.get('SAMLRequest');
  if (!encoded) throw new Error(`no SAMLRequest in ${location}`);
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
  const match = /\sID="([^"]+)"/.exec(xml);
  if (!match) throw new Error('no ID in the AuthnRequest');
  return match[1]!;
}
