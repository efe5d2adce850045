// What the page shares with the object: types only, no platform imports, so the
// page type-checks against the DOM library and the object against workers-types.

/** The callables a dokit client may call (`CounterCallables` implements it). */
export interface CounterApi {
  /** @returns the new count */
  increment(): Promise<number>;
  /** @returns the current count */
  count(): Promise<number>;
}

/** What dokit clients receive when the count changes, from any kind of client. */
export type CountMessage = { type: "count"; count: number; by: "legacy" | "dokit" | "http" };
