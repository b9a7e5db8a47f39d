/**
 * Limits of the unauthenticated assertion consumer (`POST /auth/saml/acs`).
 *
 * Real IdP responses are small: Okta, Entra ID, ADFS, Keycloak and Google send 4–30 KB of XML; an
 * assertion carrying a few hundred group names stays under ~120 KB (Entra ID switches to a "groups
 * overage" claim past 150 groups). The form body carries the XML base64-encoded (4/3 larger) and
 * URL-encoded, so 256 KiB admits ~190 KB of XML: every real response, and a forged one costs the
 * signature check at most ~1/4 of what the former 1 MiB allowed.
 */
export const SAML_ACS_BODY_LIMIT_BYTES = 256 * 1024;

/** A signature check still running after this long is given up (the worker is restarted). */
export const SAML_VERIFY_TIMEOUT_MS = 10_000;

/** Responses waiting for the signature worker at once; more answer 503 with Retry-After. */
export const SAML_VERIFY_MAX_PENDING = 8;

/** Heap of the signature worker, so a hostile document cannot exhaust the hub's memory. */
export const SAML_VERIFIER_HEAP_MB = 256;
