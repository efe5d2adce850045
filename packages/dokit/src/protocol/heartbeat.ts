// Heartbeat text frames and the close of a socket that stopped sending them (dokit's own,
// not the Agents protocol's; docs/websockets.md). Shared by server and client; holds no behaviour.

/**
 * Heartbeat text frames (dokit's, not the Agents protocol's): a client sends the ping, and the
 * runtime itself answers with the pong (`setWebSocketAutoResponse`), without waking the object.
 * Exact strings, not JSON, so no frame type can claim them.
 */
export const HEARTBEAT_PING = "dokit:ping";
export const HEARTBEAT_PONG = "dokit:pong";
/**
 * A socket closed by the heartbeat sweep: its last ping is older than the limit. In 3000–3999
 * (registered for libraries), so clients reconnect.
 */
export const CLOSE_HEARTBEAT_TIMEOUT = 3008;
