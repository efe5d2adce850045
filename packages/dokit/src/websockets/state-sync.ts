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
import type { BuiltDoor, ConnectionPlugin, PluginDoor } from "./plugin";

/** The identity frame's field that says a state frame follows it. */
const STATE_FOLLOWS = Object.freeze({ stateFollows: true });

/** The plug-in of the `state` option: it syncs `state` with the protocol-enabled connections. */
export class StateSync implements ConnectionPlugin {
  readonly pluginName = "state";
  readonly identity = STATE_FOLLOWS;
  readonly #state: SyncedState;
  readonly #sync: boolean;
  #door: BuiltDoor | undefined;
  /** The state frame the state has just sent by itself, until a `broadcast` of it is skipped. */
  #synced: string | undefined;

  /**
   * @param state - the state of the `state` option
   * @param sync - whether the state sends its own changes (the `syncState` option)
   */
  constructor(state: SyncedState, sync: boolean) {
    this.#state = state;
    this.#sync = sync;
  }

  /** Takes the door's protocol broadcast, and hands the state its side of it (a wake that changes nothing sends nothing). */
  built(door: BuiltDoor): void {
    this.#door = door;
    if (!this.#sync) return;
    this.#state.syncThrough?.((frame, except) => {
      this.#synced = frame;
      door.protocol(frame, except);
    });
  }

  /** Installs the state when it is a capability (a no-op when the host used it already). */
  plug({ claims }: PluginDoor): void {
    const state = this.#state;
    if (typeof (state as Partial<Capability>).attach === "function") claims.use(state as SyncedState & Capability);
  }

  /** @returns the state frame, sent right after the identity frame */
  connectFrame(): string {
    return this.#state.stateFrame();
  }

  /**
   * Sends the current state to every protocol-enabled connection but `except`. The first call for a
   * value the state has just sent by itself (code written for the reference calls it from `onChanged`) sends nothing.
   */
  broadcast(except?: Connection | "server" | null): void {
    const frame = this.#state.stateFrame();
    if (frame === this.#synced) return void (this.#synced = undefined);
    this.#door?.protocol(frame, except);
  }
}

// Works before the WebSockets is attached (lifecycle/wake.ts): its broadcast comes from `built`, its connect frame runs on upgrades.
(StateSync.prototype as Wakeable)[WORKS_UNATTACHED] = true;
