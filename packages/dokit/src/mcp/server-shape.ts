import { McpServer, type Server } from "@modelcontextprotocol/server";

// The factory's server may come from another copy of `@modelcontextprotocol/server`
// than dokit's (a second install, another version), so its classes are not
// dokit's and `instanceof` fails. It is recognised by shape instead: the
// low-level `Server` has `getCapabilities`, an `McpServer` wraps one as `.server`.

/** @returns the low-level `Server` of an `McpServer` from any copy of the SDK, or the low-level server itself */
export function lowLevelOf(server: McpServer | Server): Server {
  return "getCapabilities" in server ? server : server.server;
}

/**
 * What to hand the SDK's own `createMcpHandler`, which recognises an `McpServer` by `instanceof`:
 * dokit's copy as it is, another copy's `McpServer` as its low-level server.
 * @returns a server the SDK serves whichever copy built it
 */
export function forSdk(server: McpServer | Server): McpServer | Server {
  return server instanceof McpServer ? server : lowLevelOf(server);
}
