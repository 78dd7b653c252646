/**
 * `make` with its answers remembered, at most `max` of them (all forgotten when full: the values
 * a request needs again are the recent ones, and a clear costs less than an LRU's bookkeeping).
 * For pure functions whose text a response writes again and again (a deal list's dates and values).
 */
export function remembered<K, V>(max: number, make: (key: K) => V): (key: K) => V {
  const known = new Map<K, V>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined) {
      value = make(key);
      if (known.size >= max) known.clear();
      known.set(key, value);
    }
    return value;
  };
}
