// The `stub` proxy: property access yields a function that calls the method.

/**
 * Names that JavaScript itself, `await`, `JSON.stringify`, `console.log`,
 * React and test matchers probe on any object. They read as `undefined`,
 * so awaiting or logging a stub sends nothing.
 */
const PROBED = new Set([
  "then",
  "catch",
  "finally",
  "toJSON",
  "valueOf",
  "toString",
  "toLocaleString",
  "constructor",
  "prototype",
  "__proto__",
  "$$typeof",
  "@@toStringTag",
  "asymmetricMatch",
  "nodeType",
  "inspect",
]);

/**
 * @param call - sends one call
 * @returns a proxy whose every other string property is an async function calling that method
 */
export function createStub<Stub>(call: (method: string, args: unknown[]) => Promise<unknown>): Stub {
  const target = Object.create(null) as object;
  // SAFETY: the proxy answers every string key with a caller, which is what the mapped stub type describes.
  return new Proxy(target, {
    get: (_target, key) =>
      typeof key === "symbol" || PROBED.has(key) ? undefined : (...args: unknown[]) => call(key, args),
    has: () => false,
    ownKeys: () => [],
  }) as Stub;
}
