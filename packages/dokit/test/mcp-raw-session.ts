// A 2025-era MCP session driven by hand (raw HTTP), for tests that look at what
// the wire carries: inside workerd (test/mcp, through the test worker) and in
// Node (test-conformance, over loopback). Each passes its own fetch.
import { expect } from "vitest";

/** The protocol version the raw sessions declare. */
export const RAW_SESSION_VERSION = "2025-11-25";
const ACCEPT = "application/json, text/event-stream";

type Fetch = (input: URL, init?: RequestInit) => Promise<Response>;

/** @param send - how requests reach the server @returns helpers bound to it */
export function rawSessions(send: Fetch) {
  const headers = (session: string) => ({ "mcp-session-id": session, "mcp-protocol-version": RAW_SESSION_VERSION });
  /** POSTs one JSON-RPC message on a session. */
  const post = (target: URL, session: string, message: unknown) =>
    send(target, { method: "POST", headers: { accept: ACCEPT, "content-type": "application/json", ...headers(session) }, body: JSON.stringify(message) });
  /** Opens the session's GET stream, resuming after `lastEventId` when given. */
  const get = (target: URL, session: string, lastEventId?: string) =>
    send(target, { method: "GET", headers: { accept: "text/event-stream", ...headers(session), ...(lastEventId && { "last-event-id": lastEventId }) } });
  /** Initializes a session (initialize, then notifications/initialized). @returns its id */
  const open = async (target: URL): Promise<string> => {
    const init = await send(target, {
      method: "POST",
      headers: { accept: ACCEPT, "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: RAW_SESSION_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get("mcp-session-id");
    if (!session) throw new Error("no Mcp-Session-Id");
    expect((await post(target, session, { jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
    return session;
  };
  return { open, post, get };
}
