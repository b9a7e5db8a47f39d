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

/**
 * Elements a response may hold before any parsing: the check's cost grows with the square of the
 * sibling count (4,000: ~0.5 s; 16,000: 4 s). Real responses hold a few dozen, ~1,700 with 800 groups.
 */
export const SAML_MAX_ELEMENTS = 4_000;

/** Nesting a response may have: a signed response nests about 8 levels. */
export const SAML_MAX_DEPTH = 64;

/**
 * A signature check still running after this long is given up: its worker is stopped and replaced,
 * and only that check is refused; the checks waiting behind it go on.
 */
export const SAML_VERIFY_TIMEOUT_MS = 10_000;

/** Responses checked or waiting at once; more answer 503 with Retry-After. */
export const SAML_VERIFY_MAX_PENDING = 8;

/** Signature workers (threads), each checking one response at a time. */
export const SAML_VERIFY_WORKERS = 2;

/** Heap of the signature worker, so a hostile document cannot exhaust the hub's memory. */
export const SAML_VERIFIER_HEAP_MB = 256;

/**
 * How long the one-time code of a browser's SAML login may wait for the Web UI to exchange it: the
 * redirect and one request, seconds in practice.
 */
export const SAML_HANDOFF_TTL_MS = 2 * 60 * 1000;
