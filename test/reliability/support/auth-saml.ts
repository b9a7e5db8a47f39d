import { request, type JsonResponse } from '../../helpers/http';
import { assertionXml, authnRequestId, responseXml, signAssertion, type AssertionOptions, type TestIdp } from '../../helpers/saml-idp';
import { ACS_URL, SP_ENTITY_ID } from './auth-hub';

/**
 * Crafts SAML responses for one hub (test/helpers/saml-idp.ts does the XML and the signing): genuine
 * ones from its IdP, and the attacks — replays, other audiences and recipients, wrapped signatures,
 * DTDs — built from genuine pieces, so each differs from an accepted response in one way only.
 */
export class SamlResponses {
  constructor(
    private readonly api: string,
    readonly idp: TestIdp,
  ) {}

  /** Starts a login at the hub, as a browser would, and returns the AuthnRequest ID to answer. */
  async startLogin(): Promise<string> {
    const response = await fetch(`${this.api}/auth/saml/login`, { redirect: 'manual' });
    if (response.status !== 302) throw new Error(`SAML login answered ${response.status}`);
    return authnRequestId(response.headers.get('location')!);
  }

  /** Assertion options that the hub accepts, answering a fresh request of its own. */
  async options(email: string, overrides: Partial<AssertionOptions> = {}): Promise<AssertionOptions> {
    return { email, audience: SP_ENTITY_ID, recipient: ACS_URL, inResponseTo: await this.startLogin(), ...overrides };
  }

  /** The assertion, signed by `signer` (default: the hub's IdP). */
  signedAssertion(options: AssertionOptions, signer: TestIdp = this.idp): string {
    return signAssertion(assertionXml(this.idp, options), signer.keyPem, signer.certPem);
  }

  unsignedAssertion(options: AssertionOptions): string {
    return assertionXml(this.idp, options);
  }

  /**
   * The Response document around `inner` (assertions, or anything else), with an optional prolog
   * (XML declaration, DOCTYPE) before the root.
   */
  responseXml(inner: string, inResponseTo: string | undefined, prolog = ''): string {
    return prolog + responseXml(this.idp, inner, { destination: ACS_URL, inResponseTo });
  }

  /** A whole genuine response: what the IdP posts through the browser. */
  async genuine(email: string, overrides: Partial<AssertionOptions> = {}): Promise<string> {
    const options = await this.options(email, overrides);
    return this.responseXml(this.signedAssertion(options), options.inResponseTo);
  }

  /** Posts a Response document (base64 in the form field, as browsers do); JSON answers. */
  post(xml: string): Promise<JsonResponse> {
    return request(`${this.api}/auth/saml/acs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ SAMLResponse: Buffer.from(xml, 'utf8').toString('base64'), RelayState: 'r' }).toString(),
    });
  }
}

/** A genuine signed assertion and a forged (unsigned) one naming someone else, answering one request. */
export interface WrappingPair {
  inResponseTo: string;
  genuine: string;
  forged: string;
}

/**
 * XML signature wrapping (XSW): the document keeps a validly signed assertion somewhere, while the
 * assertion a careless consumer reads is the forged one. Variants after Somorovsky et al., "On
 * Breaking SAML" (2012).
 */
export const WRAPPINGS: Record<string, (pair: WrappingPair, saml: SamlResponses) => string> = {
  'forged assertion first, the signed one after it': (pair, saml) => saml.responseXml(pair.forged + pair.genuine, pair.inResponseTo),
  'signed assertion hidden in the forged one’s Advice': (pair, saml) =>
    saml.responseXml(pair.forged.replace('</saml:Subject>', `</saml:Subject><saml:Advice>${pair.genuine}</saml:Advice>`), pair.inResponseTo),
  'signed assertion moved into the Response’s Extensions': (pair, saml) =>
    saml.responseXml(`<samlp:Extensions>${pair.genuine}</samlp:Extensions>${pair.forged}`, pair.inResponseTo),
  'forged assertion takes the signed one’s ID and Signature element': (pair, saml) => {
    const id = /ID="([^"]+)"/.exec(pair.genuine)![1]!;
    const signature = /<(ds:)?Signature[\s\S]*<\/(ds:)?Signature>/.exec(pair.genuine)![0];
    const forged = pair.forged.replace(/ID="[^"]+"/, `ID="${id}"`).replace(/(<saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${signature}`);
    return saml.responseXml(forged, pair.inResponseTo);
  },
  'forged assertion inside the signed one’s Signature (Object element)': (pair, saml) =>
    saml.responseXml(
      pair.genuine
        .replace('</ds:SignatureValue>', `</ds:SignatureValue><ds:Object>${pair.forged}</ds:Object>`)
        .replace('</SignatureValue>', `</SignatureValue><Object>${pair.forged}</Object>`),
      pair.inResponseTo,
    ),
};

/** A document type declaration before the Response: what each DTD attack puts there, and where it refers. */
export function doctype(internalSubset: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE samlp:Response [${internalSubset}]>\n`;
}

/** Ten levels of ten references each: 10^10 characters if expanded ("billion laughs"). */
export const BILLION_LAUGHS = '<!ENTITY l0 "lol">' + Array.from({ length: 10 }, (_, level) => `<!ENTITY l${level + 1} "${`&l${level};`.repeat(10)}">`).join('');
