import type { IncomingMessage } from 'node:http';
import { createAuth, type Auth } from '../auth';
import { SamlService } from '../auth/saml/service';
import { resolveSamlSettings } from '../auth/saml/settings';
import { checkUpgradeCredential } from '../auth/websocket';
import type { RefreshCookieOptions } from '../api/refresh-cookie';
import type { Role } from '../core/principal';
import type { Core } from './service-types';

/** How a WebSocket upgrade is authenticated (the session stream and the log stream). */
export type SocketAuthenticator = (request: IncomingMessage, options: { queryToken: boolean; role?: Role }) => ReturnType<typeof checkUpgradeCredential>;

/** Auth of an API process: one authenticator for REST (the guard) and WebSocket upgrades, and SAML when configured. */
export interface AuthParts {
  auth: Auth;
  authenticateSocket: SocketAuthenticator;
  /** null: SAML is not configured. */
  saml: SamlService | null;
  /** The Web UI's refresh token as an HttpOnly cookie (src/api/refresh-cookie.ts). */
  refreshCookie: RefreshCookieOptions;
}

/** Builds auth from the `auth` config section; `cwd` resolves the SAML certificate files. */
export function composeAuth(core: Core, cwd: string | undefined): AuthParts {
  const { config, drivers, lifecycle } = core;
  // A credential change reaches every process: caches forget it, sockets it opened close.
  const auth = createAuth(config.auth, core.database, (change) => drivers.control.publish({ kind: 'principal_changed', ...change }));
  const authenticateSocket: SocketAuthenticator = (request, options) => checkUpgradeCredential(request, auth.authenticator, options);
  const samlSettings = resolveSamlSettings(config.auth.saml, config.server.public_url ?? `http://localhost:${config.server.port}`, cwd);
  const saml = samlSettings ? new SamlService(samlSettings, auth.models, auth.users, auth.sessions, core.logger, core.audit) : null;
  if (saml) lifecycle.onStop({ name: 'saml signature worker', stop: () => saml.close() });
  const refreshCookie = { maxAgeS: config.auth.refresh_token_ttl_days * 86_400, secure: (config.server.public_url ?? '').startsWith('https:') };
  return { auth, authenticateSocket, saml, refreshCookie };
}
