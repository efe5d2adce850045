// What the page shares with the object: types only, no platform imports.

/** The synced state: the count, and the last change an MCP tool made. */
export type CounterState = { count: number; last: { by: number; at: number } | null };
