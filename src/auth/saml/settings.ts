import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from '../../config';

/** Everything the SAML service needs, resolved once at startup. */
export interface SamlSettings {
  entryPoint: string;
  issuer: string;
  idpIssuer: string | null;
  idpCert: string;
  callbackUrl: string;
  webUiUrl: string;
  roleAttribute: string | null;
  clockSkewMs: number;
  validateInResponseTo: 'always' | 'ifPresent';
}

/**
 * Resolves `auth.saml` against the public URL; null when SAML is off. Refuses (ConfigError, exit 78)
 * an enabled configuration without an entry point or with no readable IdP certificate.
 */
export function resolveSamlSettings(config: Config['auth']['saml'], publicUrl: string, cwd: string = process.cwd()): SamlSettings | null {
  if (!config.enabled) return null;
  if (!config.entry_point) throw new ConfigError('auth.saml.entry_point: is required when auth.saml.enabled is true');
  let idpCert = config.idp_cert;
  if (!idpCert && config.idp_cert_file) {
    const file = path.resolve(cwd, config.idp_cert_file);
    try {
      idpCert = readFileSync(file, 'utf8');
    } catch {
      throw new ConfigError(`auth.saml.idp_cert_file: cannot read ${file}`);
    }
  }
  if (!idpCert || !idpCert.includes('BEGIN CERTIFICATE')) {
    throw new ConfigError('auth.saml.idp_cert: a PEM certificate (or auth.saml.idp_cert_file) is required when SAML is enabled');
  }
  const base = publicUrl.replace(/\/+$/, '');
  return {
    entryPoint: config.entry_point,
    issuer: config.issuer,
    idpIssuer: config.idp_issuer,
    idpCert,
    callbackUrl: config.callback_url ?? `${base}/api/v1/auth/saml/acs`,
    webUiUrl: config.web_ui_url ?? `${base}/`,
    roleAttribute: config.role_attribute,
    clockSkewMs: config.clock_skew_s * 1000,
    validateInResponseTo: config.validate_in_response_to,
  };
}
