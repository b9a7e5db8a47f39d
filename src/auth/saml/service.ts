import { SAML, type Profile, type SamlConfig } from '@node-saml/node-saml';
import { Strategy as SamlStrategy } from '@node-saml/passport-saml';
import type { Request, Response } from 'express';
import passport from 'passport';
import { Op, UniqueConstraintError } from 'sequelize';
import { AppError } from '../../core/errors';
import type { Role } from '../../core/principal';
import type { AuthModels } from '../../db/models/auth';
import type { UserRecord } from '../../db/models/user';
import type { Logger } from '../../logs/logger';
import type { Sessions, TokenPair } from '../sessions';
import type { Users } from '../users';
import { assertionFacts } from './assertion';
import { DatabaseRequestCache, SAML_REQUEST_TTL_MS } from './request-cache';
import type { SamlSettings } from './settings';

const SAML_STRATEGY = 'saml';
/** Kept in the replay cache when an assertion states no NotOnOrAfter at all. */
const DEFAULT_ASSERTION_LIFETIME_MS = 60 * 60 * 1000;

function refused(): AppError {
  return new AppError('UNAUTHORIZED', 'The SAML response is not valid.');
}

/**
 * SAML 2.0 service provider: metadata, the login redirect and the assertion consumer. node-saml
 * checks the signature (assertions must be signed by `idpCert`), audience, validity window and
 * InResponseTo; we add the Recipient check, the assertion-ID replay cache and provisioning.
 */
export class SamlService {
  private readonly saml: SAML;
  private readonly authenticator = new passport.Passport();

  constructor(
    private readonly settings: SamlSettings,
    private readonly models: AuthModels,
    private readonly users: Users,
    private readonly sessions: Sessions,
    private readonly logger: Logger,
  ) {
    const options: SamlConfig = {
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
      cacheProvider: new DatabaseRequestCache(models.SamlRequest),
      disableRequestedAuthnContext: true,
      ...(settings.privateKey ? { privateKey: settings.privateKey, signatureAlgorithm: 'sha256' as const } : {}),
    };
    this.saml = new SAML(options);
    const strategy = new SamlStrategy(
      options,
      (profile: Profile | null, done: (error: Error | null, user?: Record<string, unknown>) => void) => {
        this.accept(profile).then(
          (user) => done(null, user as unknown as Record<string, unknown>),
          (error: Error) => done(error),
        );
      },
      (_profile: Profile | null, done: (error: Error | null) => void) => done(new Error('single logout is not supported')),
    );
    // passport-saml bundles its own @types/express; the strategy is a passport strategy all the same.
    this.authenticator.use(SAML_STRATEGY, strategy as unknown as passport.Strategy);
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

  /** Validates a posted SAMLResponse and logs the user in. */
  consume(req: Request, res: Response): Promise<TokenPair> {
    return new Promise((resolve, reject) => {
      const middleware = this.authenticator.authenticate(SAML_STRATEGY, { session: false }, (error: unknown, user: UserRecord | false) => {
        if (error || !user) {
          // The reason is logged for the operator (no secrets in it: it names the failed check),
          // never returned: the client learns only that the response was refused.
          this.logger.warn({ reason: error instanceof Error ? error.message : 'no user' }, 'SAML response refused');
          reject(error instanceof AppError && error.status >= 500 ? error : refused());
          return;
        }
        this.sessions.issue(user).then(resolve, reject);
      }) as (req: Request, res: Response, next: (error?: unknown) => void) => void;
      middleware(req, res, (error) => reject(AppError.from(error)));
    });
  }

  /** Called with node-saml's validated profile: our own checks, then find or provision the user. */
  private async accept(profile: Profile | null): Promise<UserRecord> {
    if (!profile) throw new Error('no profile (logout responses are not accepted here)');
    const facts = assertionFacts(profile, DEFAULT_ASSERTION_LIFETIME_MS);
    if (!facts) throw new Error('assertion without an ID');
    // node-saml compares idpIssuer with the Response's Issuer only; the signed assertion's must match too.
    if (this.settings.idpIssuer !== null && profile.issuer !== this.settings.idpIssuer) throw new Error('assertion Issuer is not the IdP');
    if (facts.recipients.length === 0 || facts.recipients.some((recipient) => recipient !== this.settings.callbackUrl)) {
      throw new Error('assertion Recipient is not our assertion consumer URL');
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
      if (error instanceof UniqueConstraintError) throw new Error('assertion ID already used (replay)');
      throw error;
    }
  }

  private async findOrProvision(profile: Profile): Promise<UserRecord> {
    const email = emailOf(profile);
    if (!email) throw new Error('assertion carries no email (NameID or email attribute)');
    const role = this.roleOf(profile);
    const existing = await this.users.findByEmail(email);
    if (existing) {
      if (!existing.is_active) throw new Error('user is inactive');
      if (role !== null && existing.role !== role) {
        existing.role = role;
        await existing.save();
      }
      return existing;
    }
    return this.provision(email, role ?? 'user');
  }

  private async provision(email: string, role: Role): Promise<UserRecord> {
    const base = email.split('@')[0]!.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 50).padEnd(3, '_');
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
    throw new Error('could not find a free username');
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

function emailOf(profile: Profile): string | null {
  for (const candidate of [profile.email, profile.mail, profile.nameID]) {
    if (typeof candidate === 'string' && EMAIL.test(candidate)) return candidate.toLowerCase();
  }
  return null;
}
