// The Agents-protocol frames a WebSockets sends by itself: the identity frame, the connect frames
// (identity, then the state, then the frames other capabilities add) and a protocol frame sent to
// every protocol-enabled connection but those inside their connect sequence. Which connections
// speak the protocol (their flags) is decided on accept (accept.ts).
import type { ProtocolFrame } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { trySend } from "../frames/send";
import { IDENTITY } from "../protocol/agents";
import { flagsOf } from "./connection";
import { CONNECTING, DISPATCH, installedOn, OPTIONS } from "./internal";
import type { Identity } from "./options";
import type { WebSockets } from "./websockets";

/** @returns the identity frame: `identity`'s name and class, by default the object's name and kebab class */
export function identityFrame(lifecycle: Lifecycle, identity: Identity | undefined, stateFollows: boolean): string {
  const frame: Record<string, unknown> = {
    type: IDENTITY,
    name: identity?.name ?? lifecycle.name,
    agent: identity?.agent ?? lifecycle.className,
  };
  if (stateFollows) frame.stateFollows = true;
  return JSON.stringify(frame);
}

/** Sends the connect frames to a connection known to speak the protocol (its flags are not read). */
export function connectFrames(sockets: WebSockets, connection: Connection, identity?: Identity): void {
  const state = sockets[OPTIONS].state;
  trySend(connection, identityFrame(installedOn(sockets), identity, state !== undefined));
  if (state) trySend(connection, state.stateFrame());
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
