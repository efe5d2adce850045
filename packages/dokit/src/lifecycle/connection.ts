/**
 * A WebSocket accepted by the WebSockets capability, with its id, tags and a
 * small state value that survives hibernation. Declared here so every
 * capability can name it without importing `dokit/websockets`.
 */
export interface Connection<S = unknown> extends WebSocket {
  /** The connection id: the client's `_pk`, or one generated on accept. */
  readonly id: string;
  /**
   * What other clients are shown of this connection (presence, a room message's `from`): derived
   * one way from `id`, the same for the same `id`. `id` itself is a secret of its client's: whoever
   * knows it can connect with it and replace this connection.
   */
  readonly publicId: string;
  /** The URL of the upgrade request. */
  readonly uri: string | null;
  /** The connection's tags; the id is always the first. */
  readonly tags: readonly string[];
  /** The user's value stored on this connection, or `null`. Never shows internal flags. */
  readonly state: S | null;
  /**
   * Replaces `state` (a function receives the previous value; `null` clears it).
   * Throws `ATTACHMENT_TOO_LARGE` and keeps the previous state when the value does not fit.
   * @returns the new state
   */
  setState(next: S | null | ((previous: S | null) => S | null)): S | null;
}

/** What an upgrade handler and `onConnect` receive besides the connection. */
export interface ConnectionContext {
  /** The upgrade request. */
  request: Request;
}
