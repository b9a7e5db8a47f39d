import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Config } from '../../config';

/** Everything the SAML service needs, resolved once at startup. */
export interface SamlSettings {
  entryPoint: string;
  issuer: string;
  idpIssuer: string | null;
  idpCert: string;
  /** Signs AuthnRequests when set; `spCert` is then published in the metadata. */
  privateKey: string | null;
  spCert: string | null;
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
  const idpCert = pemFrom('idp_cert', config.idp_cert, config.idp_cert_file, cwd);
  if (!idpCert || !idpCert.includes('BEGIN CERTIFICATE')) {
    throw new ConfigError('auth.saml.idp_cert: a PEM certificate (or auth.saml.idp_cert_file) is required when SAML is enabled');
  }
  const privateKey = pemFrom('private_key', config.private_key, config.private_key_file, cwd);
  if (privateKey !== null && !privateKey.includes('PRIVATE KEY')) {
    // Named by its variable, never echoed: it is a secret.
    throw new ConfigError('SERVICE_SAML_PRIVATE_KEY: not a PEM private key');
  }
  const spCert = pemFrom('sp_cert', config.sp_cert, config.sp_cert_file, cwd);
  if (privateKey !== null && (spCert === null || !spCert.includes('BEGIN CERTIFICATE'))) {
    throw new ConfigError('auth.saml.sp_cert: a PEM certificate for the signing key is required when a private key is set');
  }
  const base = publicUrl.replace(/\/+$/, '');
  return {
    entryPoint: config.entry_point,
    issuer: config.issuer,
    idpIssuer: config.idp_issuer,
    idpCert,
    privateKey,
    spCert,
    callbackUrl: config.callback_url ?? `${base}/api/v1/auth/saml/acs`,
    webUiUrl: config.web_ui_url ?? `${base}/`,
    roleAttribute: config.role_attribute,
    clockSkewMs: config.clock_skew_s * 1000,
    validateInResponseTo: config.validate_in_response_to,
  };
}

/** Inline PEM text wins over a file; null when neither is set. */
function pemFrom(key: string, inline: string | null, file: string | null, cwd: string): string | null {
  if (inline) return inline;
  if (!file) return null;
  const resolved = path.resolve(cwd, file);
  try {
    return readFileSync(resolved, 'utf8');
  } catch {
    throw new ConfigError(`auth.saml.${key}_file: cannot read ${resolved}`);
  }
}
