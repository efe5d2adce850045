// The close of a connection that kept sending over its rate limit (dokit's own, not the
// Agents protocol's; docs/websockets.md). Shared by server and client; holds no behaviour.

/**
 * A connection that kept sending over its `rateLimit` (WebSockets): closed after `closeAfter`
 * dropped messages in a row. In 4000–4999, so clients do not reconnect; named after HTTP 429.
 */
export const CLOSE_RATE_LIMITED = 4429;
export const RATE_LIMITED_REASON = "dokit: too many messages";
