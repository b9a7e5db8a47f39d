/**
 * Redacts a log line's object by path, as pino's `redact` option does, with the paths compiled into
 * a tree once. A line is checked key by key against the tree and copied only where a value is
 * censored. pino 10's own redaction (@pinojs/redact) parses every path on every line and runs the
 * wildcard paths over every object-valued field: 15.5 µs a line with our 39 paths against 1.5 µs
 * without (measured through createLogger; docs/performance.md), paid by every request's access-log
 * line at the default level.
 *
 * Path forms (pino's): `name`, `a.b.c`, `a["x-y"].b`, and `*` as the first segment only
 * (`*.name`: that key in any top-level object).
 */
interface PathNode {
  censored: boolean;
  children: Map<string, PathNode>;
}

/** One segment: `name` (after a dot, or first) or `["quoted"]` / `['quoted']`. */
const SEGMENT = /^(?:([^.[\]]+)|\[(["'])(.*?)\2\])/;

function segmentsOf(path: string): string[] {
  const segments: string[] = [];
  let rest = path;
  while (rest.length > 0) {
    if (segments.length > 0 && rest.startsWith('.')) rest = rest.slice(1);
    const match = SEGMENT.exec(rest);
    if (!match) throw new Error(`log redaction: cannot read the path ${path}`);
    segments.push(match[1] ?? match[3]!);
    rest = rest.slice(match[0].length);
  }
  if (segments.length === 0 || segments.slice(1).includes('*')) throw new Error(`log redaction: unsupported path ${path} (a * only first)`);
  return segments;
}

function emptyNode(): PathNode {
  return { censored: false, children: new Map() };
}

function add(node: PathNode, segments: readonly string[]): void {
  if (node.censored) return;
  if (segments.length === 0) {
    node.censored = true;
    node.children.clear();
    return;
  }
  const [first, ...rest] = segments as [string, ...string[]];
  let child = node.children.get(first);
  if (!child) node.children.set(first, (child = emptyNode()));
  add(child, rest);
}

/**
 * The tree of `paths`: each literal top-level key also gets the wildcard's paths (a `*.b` path
 * applies under `a` too), and a key named by no path gets the wildcard's node.
 */
function compile(paths: readonly string[]): { root: PathNode; wildcard: PathNode } {
  const parsed = paths.map(segmentsOf);
  const underWildcard = parsed.filter((segments) => segments[0] === '*').map((segments) => segments.slice(1));
  const withWildcardPaths = () => {
    const node = emptyNode();
    for (const rest of underWildcard) add(node, rest);
    return node;
  };
  const wildcard = withWildcardPaths();
  const root = emptyNode();
  for (const [first, ...rest] of parsed) {
    if (first === '*') continue;
    let node = root.children.get(first!);
    if (!node) root.children.set(first!, (node = withWildcardPaths()));
    add(node, rest);
  }
  return { root, wildcard };
}

/**
 * A copy that keeps what the value is: an array stays one, an Error keeps its class, message and
 * stack. Every property stays redefinable, so a frozen original's copy can still be censored.
 */
function copyOf<T extends object>(value: T): T {
  if (Array.isArray(value)) return value.slice() as T;
  const descriptors = Object.getOwnPropertyDescriptors(value);
  for (const key of Reflect.ownKeys(descriptors)) descriptors[key as keyof typeof descriptors]!.configurable = true;
  return Object.create(Object.getPrototypeOf(value) as object | null, descriptors) as T;
}

/** The value a path node leaves in place of `field` (the same value when nothing under it is censored). */
function redactedField(field: unknown, child: PathNode, censor: string): unknown {
  if (child.censored) return censor;
  if (child.children.size > 0 && typeof field === 'object' && field !== null) return redactUnder(field, child, null, censor);
  return field;
}

/**
 * An object's own keys are looked up in the tree (under the root, a key no path names gets the
 * wildcard's node); an array's are not walked: only the keys the tree names are looked at, so a
 * long array in a line costs a few look-ups.
 */
function redactUnder<T extends object>(value: T, node: PathNode, fallback: PathNode | null, censor: string): T {
  let copy: T | null = null;
  if (Array.isArray(value)) {
    for (const [key, child] of node.children) if (Object.prototype.propertyIsEnumerable.call(value, key)) copy = censorField(value, copy, key, child, censor);
  } else {
    for (const key of Object.keys(value)) {
      const child = node.children.get(key) ?? fallback;
      if (child) copy = censorField(value, copy, key, child, censor);
    }
  }
  return copy ?? value;
}

/** `copy` (made on the first change) with `key` censored under `child`; unchanged when nothing is. */
function censorField<T extends object>(value: T, copy: T | null, key: string, child: PathNode, censor: string): T | null {
  const field = (value as Record<string, unknown>)[key];
  if (field === undefined) return copy;
  const replaced = redactedField(field, child, censor);
  if (replaced === field) return copy;
  const target = copy ?? copyOf(value);
  Object.defineProperty(target, key, { value: replaced, enumerable: true, writable: true, configurable: true });
  return target;
}

/** Returns a function that answers the object redacted (the same object when nothing matched). */
export function pathRedactor(paths: readonly string[], censor: string): <T extends object>(value: T) => T {
  const { root, wildcard } = compile(paths);
  const fallback = wildcard.censored || wildcard.children.size > 0 ? wildcard : null;
  return (value) => redactUnder(value, root, fallback, censor);
}
