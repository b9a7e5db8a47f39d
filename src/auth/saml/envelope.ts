/**
 * What can be read from a SAMLResponse without parsing it: the root element and its first child,
 * found by scanning the first few kilobytes. It lets the assertion consumer refuse a response that
 * cannot be ours (not a Response, an InResponseTo we never issued, another issuer) before any XML
 * parsing or signature work. It only ever *refuses*: whatever it cannot read plainly (entities,
 * CDATA, odd nesting) is reported as unknown and left to the full check (node-saml, in a worker).
 */
export interface ResponseEnvelope {
  /** Local name of the root element (`Response` for a login answer). */
  root: string;
  /** The root's InResponseTo: null when absent, undefined when present but not plain text. */
  inResponseTo: string | null | undefined;
  /** The text of the root's leading Issuer child: null when there is none, undefined when not plain text. */
  issuer: string | null | undefined;
}

/** The root start tag and its Issuer child sit at the very start of a response; no need to look further. */
const SCAN_LIMIT = 16 * 1024;

/** The XML inside a form field's base64 value; `null` when it cannot be XML at all. */
export function decodeSamlResponse(base64: string): string | null {
  const xml = Buffer.from(base64, 'base64').toString('utf8');
  return xml.includes('<') ? xml : null;
}

/**
 * Whether the document has a document type declaration. SAML messages never carry one; in a response
 * it is only ever an attack (entity expansion, external entities, a DTD fetched from elsewhere, text
 * that differs from what was signed), so it is refused before any parser sees it. `<!DOCTYPE` cannot
 * occur anywhere else in well-formed XML outside CDATA or a comment, and no IdP puts it there.
 */
export function hasDocumentType(xml: string): boolean {
  return /<!DOCTYPE/i.test(xml);
}

/**
 * Reads the envelope of a response document. Returns null when even the root element cannot be
 * found plainly (the full check then decides).
 */
export function readEnvelope(xml: string): ResponseEnvelope | null {
  const head = xml.slice(0, SCAN_LIMIT);
  const rootAt = skipProlog(head, 0);
  if (rootAt === null) return null;
  const root = startTag(head, rootAt);
  if (!root) return null;
  const inResponseTo = attribute(root.text, 'InResponseTo');
  let issuer: string | null | undefined = null;
  if (!root.selfClosing) {
    const childAt = skipProlog(head, root.end);
    const child = childAt === null ? null : startTag(head, childAt);
    if (child === null) issuer = undefined;
    else if (child.localName === 'Issuer') issuer = child.selfClosing ? '' : plainText(head, child.end, child.qualifiedName);
  }
  return { root: root.localName, inResponseTo, issuer };
}

interface StartTag {
  qualifiedName: string;
  localName: string;
  /** The tag's text between `<` and `>`. */
  text: string;
  /** Index just past the closing `>`. */
  end: number;
  selfClosing: boolean;
}

/** Index of the next element's `<` after whitespace, XML declaration and comments; null otherwise. */
function skipProlog(text: string, from: number): number | null {
  let at = from;
  for (;;) {
    while (at < text.length && /\s/.test(text[at]!)) at += 1;
    if (text.startsWith('<?', at)) {
      const end = text.indexOf('?>', at + 2);
      if (end < 0) return null;
      at = end + 2;
    } else if (text.startsWith('<!--', at)) {
      const end = text.indexOf('-->', at + 4);
      if (end < 0) return null;
      at = end + 3;
    } else if (text[at] === '<' && text[at + 1] !== '!' && text[at + 1] !== '/') {
      return at;
    } else {
      return null; // a DOCTYPE, CDATA, text or a closing tag: not read here
    }
  }
}

const NAME = /^<((?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*))/;

/** The start tag at `at` (which is `<`); attribute values may hold `>`, so quotes are followed. */
function startTag(text: string, at: number): StartTag | null {
  const name = NAME.exec(text.slice(at, at + 256));
  if (!name) return null;
  let quote: string | null = null;
  for (let index = at + name[0].length; index < text.length; index += 1) {
    const char = text[index]!;
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '<') {
      return null;
    } else if (char === '>') {
      return {
        qualifiedName: name[1]!,
        localName: name[2]!,
        text: text.slice(at + 1, index),
        end: index + 1,
        selfClosing: text[index - 1] === '/',
      };
    }
  }
  return null;
}

/** An unprefixed attribute's value: null when absent, undefined when it holds an entity reference. */
function attribute(tagText: string, wanted: string): string | null | undefined {
  const pattern = /\s([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
  for (let match = pattern.exec(tagText); match; match = pattern.exec(tagText)) {
    if (match[1] !== wanted) continue;
    const value = match[2] ?? match[3] ?? '';
    return value.includes('&') ? undefined : value;
  }
  return null;
}

/** An element's text when it is plain (no entities, no child elements, no CDATA), trimmed; else undefined. */
function plainText(text: string, from: number, qualifiedName: string): string | undefined {
  const end = text.indexOf('<', from);
  if (end < 0 || !text.startsWith(`</${qualifiedName}`, end)) return undefined;
  const value = text.slice(from, end);
  return value.includes('&') ? undefined : value.trim();
}
