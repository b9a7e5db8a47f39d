/**
 * A response's headers as the SDKs read them (`get`, `has`, iteration, `forEach`, `getSetCookie`),
 * from Node's raw header list: names lower-cased, repeated headers joined with ", " (Set-Cookie kept
 * apart), iterated in sorted order, as a WHATWG `Headers` does. Built once per response without the
 * per-header validation of `Headers.append` (Node's parser has checked them), and read-only: nothing
 * the SDKs do with a response changes its headers. Its state is private (`#`): serialized, as in
 * an SDK error's `headers`, it shows nothing, as a `Headers` does.
 */
export class LeanHeaders implements Iterable<[string, string]> {
  readonly #byName = new Map<string, string>();
  readonly #cookies: string[] = [];
  #sorted: [string, string][] | null = null;

  constructor(raw: readonly string[]) {
    for (let index = 0; index + 1 < raw.length; index += 2) {
      const name = raw[index]!.toLowerCase();
      const value = raw[index + 1]!;
      if (name === 'set-cookie') this.#cookies.push(value);
      const previous = this.#byName.get(name);
      this.#byName.set(name, previous === undefined ? value : `${previous}, ${value}`);
    }
  }

  get(name: string): string | null {
    return this.#byName.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#byName.has(name.toLowerCase());
  }

  getSetCookie(): string[] {
    return [...this.#cookies];
  }

  forEach(callback: (value: string, name: string, headers: this) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    // Set-Cookie is listed once per cookie, as Headers lists it.
    for (const [name, value] of this.#list()) {
      if (name !== 'set-cookie') yield [name, value];
      else for (const cookie of this.#cookies) yield [name, cookie];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }

  #list(): [string, string][] {
    this.#sorted ??= [...this.#byName].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return this.#sorted;
  }
}
