/**
 * `make(key)`, made once per key object and kept while the key lives (a WeakMap): for what is
 * derived from objects that never change once made, and asked for again turn after turn (a
 * message's JSON or size, a tool's spec).
 */
export function madeOncePer<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const made = new WeakMap<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined && !made.has(key)) {
      value = make(key);
      made.set(key, value);
    }
    return value as V;
  };
}
