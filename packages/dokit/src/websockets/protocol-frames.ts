// The Agents-protocol frames a WebSockets sends by itself: the identity frame, the connect frames
// (identity, then the plug-ins' connect frames (the state's), then the frames other capabilities add) and a protocol frame sent to
// every protocol-enabled connection but those inside their connect sequence. Which connections
// speak the protocol (their flags) is decided on accept (accept.ts).
import type { ProtocolFrame } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { trySend } from "../frames/send";
import { IDENTITY } from "../protocol/agents";
import { flagsOf } from "./connection";
import { CONNECTING, DISPATCH, installedOn, PLUGINS } from "./internal";
import type { Identity } from "./options";
import type { ConnectionPlugin } from "./plugin";
import type { WebSockets } from "./websockets";

/**
 * @returns the identity frame: `identity`'s name and class, by default the object's name and kebab
 *   class, and the fields `plugins` add to it (the state's `stateFollows`)
 */
export function identityFrame(lifecycle: Lifecycle, identity: Identity | undefined, plugins?: readonly ConnectionPlugin[]): string {
  const frame: Record<string, unknown> = {
    type: IDENTITY,
    name: identity?.name ?? lifecycle.name,
    agent: identity?.agent ?? lifecycle.className,
  };
  // After the protocol's own fields, which no plug-in changes.
  if (plugins) for (const plugin of plugins) for (const key in plugin.identity) if (!(key in frame)) frame[key] = plugin.identity[key];
  return JSON.stringify(frame);
}

/** Sends the connect frames to a connection known to speak the protocol (its flags are not read). */
export function connectFrames(sockets: WebSockets, connection: Connection, identity?: Identity): void {
  const plugins = sockets[PLUGINS];
  trySend(connection, identityFrame(installedOn(sockets), identity, plugins));
  // Right after the identity: each plug-in's own (the state's), in the plug-ins' order.
  for (const plugin of plugins) {
    const frame = plugin.connectFrame?.();
    if (frame !== undefined) trySend(connection, frame);
  }
  // Not attached (an object that waits to be wired, sending them from a handler): no capability
  // of such an object claims connect frames (lifecycle/wake.ts), so there are none to add.
  for (const source of sockets[DISPATCH]?.connectFrameSources ?? []) {
    const frame = source(connection);
    if (frame !== undefined) trySend(connection, frame);
  }
}

/**
 * Sends a protocol frame (text, or built per connection) to every protocol-enabled connection
 * except `except` and the one inside its connect sequence.
 */
export function broadcastProtocol(sockets: WebSockets, frame: ProtocolFrame, except?: Connection | "server" | null): void {
  for (const connection of sockets.getConnections()) {
    if (connection === except) continue;
    if (connection === sockets[CONNECTING]) continue;
    const flags = flagsOf(connection);
    if (!flags.protocol) continue;
    const text = typeof frame === "string" ? frame : frame(connection, flags);
    if (text !== undefined) trySend(connection, text);
  }
}
