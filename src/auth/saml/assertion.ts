import type { Profile } from '@node-saml/node-saml';

/** What we check ourselves in the signed assertion, beyond node-saml: its ID and where it was sent. */
export interface AssertionFacts {
  id: string;
  /** SubjectConfirmationData/@Recipient of every bearer confirmation. */
  recipients: string[];
  /** The latest instant the assertion is valid; the replay cache keeps its ID until then. */
  notOnOrAfter: Date;
}

type Node = { $?: Record<string, string> } & Record<string, unknown>;

function children(node: unknown, name: string): Node[] {
  const value = (node as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(value) ? (value as Node[]) : [];
}

/**
 * Reads the validated assertion (node-saml parses only the signed one, prefixes stripped). Returns
 * null when something we require is missing.
 */
export function assertionFacts(profile: Profile, fallbackLifetimeMs: number): AssertionFacts | null {
  const assertion = profile.getAssertion?.()?.Assertion as Node | undefined;
  const id = assertion?.$?.ID;
  if (!assertion || !id) return null;
  const confirmations = children(assertion, 'Subject').flatMap((subject) => children(subject, 'SubjectConfirmation'));
  const data = confirmations.flatMap((confirmation) => children(confirmation, 'SubjectConfirmationData'));
  const recipients = data.map((entry) => entry.$?.Recipient).filter((value): value is string => typeof value === 'string');
  const instants = [...data.map((entry) => entry.$?.NotOnOrAfter), ...children(assertion, 'Conditions').map((conditions) => conditions.$?.NotOnOrAfter)]
    .filter((value): value is string => typeof value === 'string')
    .map((value) => Date.parse(value))
    .filter((value) => !Number.isNaN(value));
  const notOnOrAfter = new Date(instants.length > 0 ? Math.max(...instants) : Date.now() + fallbackLifetimeMs);
  return { id, recipients, notOnOrAfter };
}
