// The client's view of a callables class, shared by `dokit/callables` and
// `dokit/client` (types only: the client never loads server code).

/**
 * The string keys of `T` whose values are functions: the names a client stub offers
 * (minus the names of Object.prototype, which are never callable).
 */
export type CallableName<T> = Exclude<
  { [K in keyof T]: K extends string ? (T[K] extends (...args: never[]) => unknown ? K : never) : never }[keyof T],
  keyof object | keyof Object
>;

/**
 * The remote interface of a callables class as a client sees it: each method
 * becomes an async function with the same arguments, resolving to the awaited result.
 */
export type AgentStub<T> = {
  [K in CallableName<T>]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};
