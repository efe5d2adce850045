// The `state` option as a plug-in of the door (plugin.ts): a synced state's connect frame and
// broadcasts. The identity frame says a state frame follows (`identity`), the state frame is sent
// right after it (`connectFrame`), and each change the state makes is sent to the other
// protocol-enabled connections through the door's protocol broadcast, set up when the WebSockets is
// built (`built`), so a change on an object a wake has not wired is sent too. Like the rate limit,
// it uses only the door's public interface (no internal of this folder), as a plug-in of your own would.
import type { Capability } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { type Wakeable, WORKS_UNATTACHED } from "../lifecycle/wake";
import type { SyncedState } from "./options";
import type { BuiltDoor, ConnectionPlugin } from "./plugin";

/** The plug-in of the `state` option, with what `broadcastState` calls. */
export interface StateSync extends ConnectionPlugin {
  /**
   * Sends the current state to every protocol-enabled connection but `except`. The first call for a
   * value the state has just sent by itself (code written for the reference calls it from `onChanged`) sends nothing.
   */
  broadcast(except?: Connection | "server" | null): void;
  /** @returns the state frame, sent right after the identity frame */
  connectFrame(): string;
}

/**
 * @param state - the state of the `state` option
 * @param sync - whether the state sends its own changes (the `syncState` option)
 * @returns the plug-in that syncs `state` with the protocol-enabled connections
 */
export function stateSync(state: SyncedState, sync: boolean): StateSync {
  let door: BuiltDoor | undefined;
  /** The state frame the state has just sent by itself, until a `broadcast` of it is skipped. */
  let synced: string | undefined;
  return {
    pluginName: "state",
    identity: { stateFollows: true },
    // Takes the door's protocol broadcast, and hands the state its side of it (a wake that changes nothing sends nothing).
    built(built) {
      door = built;
      if (!sync) return;
      state.syncThrough?.((frame, except) => {
        synced = frame;
        built.protocol(frame, except);
      });
    },
    // Installs the state when it is a capability (a no-op when the host used it already).
    plug({ claims }) {
      if (typeof (state as Partial<Capability>).attach === "function") claims.use(state as SyncedState & Capability);
    },
    connectFrame: () => state.stateFrame(),
    broadcast(except) {
      const frame = state.stateFrame();
      if (frame === synced) return void (synced = undefined);
      door?.protocol(frame, except);
    },
    // Works before the WebSockets is attached (lifecycle/wake.ts): its broadcast comes from `built`, its connect frame runs on upgrades.
    [WORKS_UNATTACHED]: true,
  } as StateSync & Wakeable;
}
