// The Cap'n Web transport on an Agents connection: the query parameter that selects it, the
// close of an object without it, and the method that carries ordinary frames over a session
// (docs/websockets.md, docs/protocol.md). Shared by server and client; holds no behaviour.

/** Query parameter selecting the Cap'n Web transport, and its value. */
export const TRANSPORT_PARAM = "__agents_transport";
export const CAPNWEB = "capnweb";
/** `__agents_transport=capnweb` on an object without the Cap'n Web transport. */
export const CLOSE_NO_TRANSPORT = 4505;
export const NO_TRANSPORT_REASON = 'dokit: Cap\'n Web not enabled: new WebSockets({ ..., capnweb }), capnweb from "dokit/capnweb"';

/** The method on a Cap'n Web session's main object that carries ordinary frames. */
export const CAPNWEB_PIPE = "__cf_agent_send";
