/**
 * How many elements a SAML response holds and how deeply they nest, counted in one linear pass over
 * the decoded XML before any parser sees it. node-saml's checks (XPath over the signed document) take
 * time quadratic in the number of sibling elements: a forged ~190 KB response with ~32,000 of them
 * kept the signature worker busy past its 10 s timeout. No IdP sends anything near the bounds.
 */
export interface XmlShapeLimits {
  maxElements: number;
  maxDepth: number;
}

/** Why the document is refused (over a bound), or null. Comments, CDATA and processing instructions open nothing. */
export function xmlShapeProblem(xml: string, limits: XmlShapeLimits): string | null {
  let elements = 0;
  let depth = 0;
  for (let at = xml.indexOf('<'); at >= 0;) {
    let end: number;
    if (xml.startsWith('<!--', at)) end = after(xml, '-->', at + 4);
    else if (xml.startsWith('<![CDATA[', at)) end = after(xml, ']]>', at + 9);
    else if (xml[at + 1] === '?' || xml[at + 1] === '!') end = after(xml, '>', at + 2);
    else if (xml[at + 1] === '/') {
      end = after(xml, '>', at + 2);
      depth = Math.max(0, depth - 1);
    } else {
      end = tagEnd(xml, at + 1);
      elements += 1;
      if (elements > limits.maxElements) return `the document has more than ${limits.maxElements} elements`;
      if (xml[end - 2] !== '/') {
        depth += 1;
        if (depth > limits.maxDepth) return `the document nests elements deeper than ${limits.maxDepth} levels`;
      }
    }
    at = xml.indexOf('<', end);
  }
  return null;
}

function after(xml: string, marker: string, from: number): number {
  const found = xml.indexOf(marker, from);
  return found < 0 ? xml.length : found + marker.length;
}

/** Index after the `>` that ends a start tag (attribute values may hold `>`). */
function tagEnd(xml: string, from: number): number {
  let quote: string | null = null;
  for (let index = from; index < xml.length; index += 1) {
    const char = xml[index];
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '>') {
      return index + 1;
    } else if (char === '<') {
      return index; // malformed: the next tag starts here (the parser refuses the document later)
    }
  }
  return xml.length;
}
