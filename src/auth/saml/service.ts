import { NO_AUDIT, type AuditSink } from '../../core/audit';
import { systemActor } from '../../core/actor';
import { SAML, type Profile, type SamlConfig } from '@node-saml/node-saml';
import { createHash, randomBytes } from 'node:crypto';
import { Op, UniqueConstraintError } from 'sequelize';
import { AppError } from '../../core/errors';
import type { Role } from '../../core/principal';
import type { AuthModels } from '../../db/models/auth';
import type { UserRecord } from '../../db/models/user';
import type { Logger } from '../../logs/logger';
import type { Sessions, TokenPair } from '../sessions';
import type { Users } from '../users';
import { assertionFacts } from './assertion';
import { decodeSamlResponse, hasDocumentType, readEnvelope } from './envelope';
import { SAML_HANDOFF_TTL_MS, SAML_MAX_DEPTH, SAML_MAX_ELEMENTS } from './limits';
import { xmlShapeProblem } from './xml-shape';
import { DatabaseRequestCache, SAML_REQUEST_TTL_MS } from './request-cache';
import type { SamlSettings } from './settings';
import { SamlResponseRefused, SamlSignatureWorker } from './signature-worker';

/** Kept in the replay cache when an assertion states no NotOnOrAfter at all. */
const DEFAULT_ASSERTION_LIFETIME_MS = 60 * 60 * 1000;

/** A validly signed assertion that our own rules refuse. */
class AcceptRefused extends Error {}

function refused(): AppError {
  return new AppError('UNAUTHORIZED', 'The SAML response is not valid.');
}

/**
 * SAML 2.0 service provider: metadata, the login redirect and the assertion consumer. node-saml
 * checks the signature (assertions must be signed by `idpCert`), audience, validity window and
 * InResponseTo, in a worker thread (SamlSignatureWorker) so the event loop stays free; before that,
 * a response that cannot be ours is refused cheaply (refuseEarly). We add the Recipient check, the
 * assertion-ID replay cache and provisioning.
 */
export class SamlService {
  private readonly saml: SAML;
  private readonly requests: DatabaseRequestCache;
  private readonly verifier: SamlSignatureWorker;

  constructor(
    private readonly settings: SamlSettings,
    private readonly models: AuthModels,
    private readonly users: Users,
    private readonly sessions: Sessions,
    private readonly logger: Logger,
    /** SAML sign-ins, refusals and IdP-driven role changes are recorded here. */
    private readonly audit: AuditSink = NO_AUDIT,
  ) {
    this.requests = new DatabaseRequestCache(models.SamlRequest);
    const verification = {
      entryPoint: settings.entryPoint,
      issuer: settings.issuer,
      audience: settings.issuer,
      idpIssuer: settings.idpIssuer ?? undefined,
      idpCert: settings.idpCert,
      callbackUrl: settings.callbackUrl,
      wantAssertionsSigned: true,
      // Many IdPs sign only the assertion; a response signature, when present, is still verified.
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: settings.clockSkewMs,
      validateInResponseTo: settings.validateInResponseTo as SamlConfig['validateInResponseTo'],
      requestIdExpirationPeriodMs: SAML_REQUEST_TTL_MS,
      disableRequestedAuthnContext: true,
    };
    // This instance writes metadata and AuthnRequests (it holds the signing key); responses are checked in the worker.
    this.saml = new SAML({
      ...verification,
      cacheProvider: this.requests,
      ...(settings.privateKey ? { privateKey: settings.privateKey, signatureAlgorithm: 'sha256' as const } : {}),
    });
    this.verifier = new SamlSignatureWorker(verification, this.requests);
  }

  /** Where browsers land after a login (tokens in the fragment). */
  get webUiUrl(): string {
    return this.settings.webUiUrl;
  }

  metadata(): string {
    return this.saml.generateServiceProviderMetadata(null, this.settings.spCert);
  }

  loginUrl(relayState: string): Promise<string> {
    return this.saml.getAuthorizeUrlAsync(relayState, undefined, {});
  }

  /** Validates a posted SAMLResponse (the form field, base64) and logs the user in. */
  async consume(samlResponse: string): Promise<TokenPair> {
    return this.sessions.issue(await this.authenticate(samlResponse));
  }

  /**
   * A browser's login (issue 26, login CSRF): the response is validated as for `consume`, but no
   * tokens travel in the URL. A one-time code does, bound to the `state` the Web UI sent as
   * RelayState (a nonce it keeps until the browser comes back): only the browser that started this
   * login holds both, and `exchange` takes them once, within SAML_HANDOFF_TTL_MS.
   */
  async consumeForBrowser(samlResponse: string, state: string): Promise<string> {
    const user = await this.authenticate(samlResponse);
    const code = randomBytes(32).toString('base64url');
    await this.models.SamlRequest.create({ id: handoffKey(code, state, user.id) });
    return code;
  }

  /** The token pair for a hand-off code and its state, once; 401 for anything else (unknown, used, expired, another state). */
  async exchange(code: string, state: string): Promise<TokenPair> {
    const prefix = handoffKey(code, state, '');
    const row = await this.models.SamlRequest.findOne({ where: { id: { [Op.startsWith]: prefix } } });
    // The delete decides who takes it: two exchanges of one code, one wins.
    const taken = row ? await this.models.SamlRequest.destroy({ where: { id: row.id } }) : 0;
    const fresh = row !== null && Date.now() - new Date(row.created_at).getTime() <= SAML_HANDOFF_TTL_MS;
    const user = taken === 1 && fresh ? await this.users.findById(row.id.slice(prefix.length)) : null;
    if (!user || !user.is_active) throw new AppError('UNAUTHORIZED', 'The sign-in code is not valid (unknown, used or expired); sign in again.');
    return this.sessions.issue(user);
  }

  /** The checks of a posted response and the user it signs in (found or provisioned); 401 otherwise. */
  private async authenticate(samlResponse: string): Promise<UserRecord> {
    let user: UserRecord;
    try {
      const early = await this.refuseEarly(samlResponse);
      if (early) throw new SamlResponseRefused(`${early} (refused before the signature check)`);
      const { profile } = await this.verifier.verify(samlResponse);
      user = await this.accept(profile);
    } catch (error) {
      if (error instanceof AppError ? error.status >= 500 : !(error instanceof SamlResponseRefused || error instanceof AcceptRefused)) throw error;
      // The reason is logged for the operator (no secrets in it: it names the failed check),
      // never returned: the client learns only that the response was refused.
      this.logger.warn({ reason: (error as Error).message }, 'SAML response refused');
      // The reason names the failed check (no assertion content, no secret), as in the log line.
      this.audit.record({ kind: 'saml.refused', actor: systemActor('saml'), action: 'refused', details: { reason: (error as Error).message } });
      throw refused();
    }
    this.audit.record({
      kind: 'saml.login',
      actor: { kind: 'user', id: user.id, name: user.username },
      subject: user.id,
      action: 'login',
      details: { role: user.role },
    });
    return user;
  }

  /** Stops the signature worker (shutdown). */
  close(): Promise<void> {
    return this.verifier.close();
  }

  /**
   * The checks that need no XML parsing: no DTD, a bounded size (elements, depth), the response's root, its InResponseTo (one we
   * issued, when the configuration requires one) and its Issuer (the configured IdP). Returns the
   * reason to refuse, or null to go on to the full check.
   */
  private async refuseEarly(samlResponse: string): Promise<string | null> {
    const xml = decodeSamlResponse(samlResponse);
    if (xml === null) return 'not base64-encoded XML';
    if (hasDocumentType(xml)) return 'the document has a DTD (DOCTYPE), which SAML responses never carry';
    const shape = xmlShapeProblem(xml, { maxElements: SAML_MAX_ELEMENTS, maxDepth: SAML_MAX_DEPTH });
    if (shape) return shape;
    const envelope = readEnvelope(xml);
    if (envelope === null) return null;
    if (envelope.root !== 'Response') return `the document is a ${envelope.root}, not a Response`;
    const { inResponseTo, issuer } = envelope;
    if (inResponseTo === null && this.settings.validateInResponseTo === 'always') return 'InResponseTo is missing';
    const known = typeof inResponseTo === 'string' ? (await this.requests.getAsync(inResponseTo)) !== null : null;
    if (known === false) return 'InResponseTo is not a request this service issued (or it was answered already)';
    if (this.settings.idpIssuer !== null && typeof issuer === 'string' && issuer !== this.settings.idpIssuer) {
      // As node-saml does for a failed response: the request it answered cannot be answered again.
      if (known) await this.requests.removeAsync(inResponseTo as string);
      return 'the Response Issuer is not the configured IdP';
    }
    return null;
  }

  /** Called with node-saml's validated profile: our own checks, then find or provision the user. */
  private async accept(profile: Profile | null): Promise<UserRecord> {
    if (!profile) throw new AcceptRefused('no profile (logout responses are not accepted here)');
    const facts = assertionFacts(profile, DEFAULT_ASSERTION_LIFETIME_MS);
    if (!facts) throw new AcceptRefused('assertion without an ID');
    // The Response's Issuer is checked early (refuseEarly); the signed assertion's must match too.
    if (this.settings.idpIssuer !== null && profile.issuer !== this.settings.idpIssuer) throw new AcceptRefused('assertion Issuer is not the IdP');
    if (facts.recipients.length === 0 || facts.recipients.some((recipient) => recipient !== this.settings.callbackUrl)) {
      throw new AcceptRefused('assertion Recipient is not our assertion consumer URL');
    }
    await this.rememberAssertion(facts.id, facts.notOnOrAfter);
    return this.findOrProvision(profile);
  }

  /** Each assertion ID is accepted once: the primary key refuses a second insert, on any process. */
  private async rememberAssertion(id: string, expiresAt: Date): Promise<void> {
    await this.models.SamlAssertion.destroy({ where: { expires_at: { [Op.lt]: new Date(Date.now() - this.settings.clockSkewMs) } } });
    try {
      await this.models.SamlAssertion.create({ id, expires_at: new Date(expiresAt.getTime() + this.settings.clockSkewMs) });
    } catch (error) {
      if (error instanceof UniqueConstraintError) throw new AcceptRefused('assertion ID already used (replay)');
      throw error;
    }
  }

  private async findOrProvision(profile: Profile): Promise<UserRecord> {
    const email = emailOf(profile);
    if (!email) throw new AcceptRefused('assertion carries no email (NameID or email attribute)');
    const role = this.roleOf(profile);
    const existing = await this.users.findByEmail(email);
    if (existing) {
      if (!existing.is_active) throw new AcceptRefused('user is inactive');
      if (role !== null && existing.role !== role) {
        const before = existing.role;
        existing.role = role;
        await existing.save();
        this.audit.record({
          kind: 'user.changed',
          actor: systemActor('saml'),
          subject: existing.id,
          action: `role:${role}`,
          details: { username: existing.username, role_before: before, from: 'idp_attribute' },
        });
      }
      return existing;
    }
    return this.provision(email, role ?? 'user');
  }

  private async provision(email: string, role: Role): Promise<UserRecord> {
    const base = email
      .split('@')[0]!
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(0, 50)
      .padEnd(3, '_');
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const username = attempt === 0 ? base : `${base}-${Math.random().toString(36).slice(2, 8)}`;
      try {
        return await this.users.create({ username, email, password: null, role });
      } catch (error) {
        // A taken username: try another; a taken email means a concurrent provisioning won.
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
        const raced = await this.users.findByEmail(email);
        if (raced) return raced;
      }
    }
    throw new AcceptRefused('could not find a free username');
  }

  /** The role attribute's value, when configured and present; `admin` or else `user`. */
  private roleOf(profile: Profile): Role | null {
    if (!this.settings.roleAttribute) return null;
    const value = profile[this.settings.roleAttribute] ?? (profile.attributes as Record<string, unknown> | undefined)?.[this.settings.roleAttribute];
    if (value === undefined) return null;
    const values = (Array.isArray(value) ? value : [value]).map(String);
    return values.includes('admin') ? 'admin' : 'user';
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * A hand-off's row in the request cache table: only hashes of the code and state (a database
 * reader learns no code), then the user's id.
 */
function handoffKey(code: string, state: string, userId: string): string {
  return `handoff:${createHash('sha256').update(`${code}\n${state}`).digest('hex')}:${userId}`;
}

function emailOf(profile: Profile): string | null {
  for (const candidate of [profile.email, profile.mail, profile.nameID]) {
    if (typeof candidate === 'string' && EMAIL.test(candidate)) return candidate.toLowerCase();
  }
  return null;
}
