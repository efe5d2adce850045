// A useSyncExternalStore source over an AgentClient. Bursts of state frames
// (each its own socket event) are coalesced: one re-render per animation
// frame in browsers, per microtask elsewhere.
import type { AgentClient } from "../client/client";
import type { AgentConnectionError } from "../client/errors";
import type { MCPServersState } from "../protocol/mcp-client";

/** What a render reads from the client. */
export interface ClientSnapshot<State> {
  readonly state: State | undefined;
  readonly mcp: MCPServersState | undefined;
  readonly identified: boolean;
  readonly ready: Promise<void>;
  readonly connectionError: AgentConnectionError | null;
  readonly name: string;
  readonly agent: string;
}

/** The members of a client a snapshot reads. */
type Watched<State> = Pick<
  AgentClient<unknown, State>,
  "state" | "mcp" | "identified" | "ready" | "connectionError" | "name" | "agent" | "subscribe"
>;

/** @returns the client's current values */
function take<State>(client: Watched<State>): ClientSnapshot<State> {
  const { state, mcp, identified, ready, connectionError, name, agent } = client;
  return { state, mcp, identified, ready, connectionError, name, agent };
}

function same<State>(a: ClientSnapshot<State>, b: ClientSnapshot<State>): boolean {
  return (
    a.state === b.state &&
    a.mcp === b.mcp &&
    a.identified === b.identified &&
    a.ready === b.ready &&
    a.connectionError === b.connectionError &&
    a.name === b.name &&
    a.agent === b.agent
  );
}

// Looked up on globalThis: Workers and Node have no requestAnimationFrame.
const frame = (globalThis as { requestAnimationFrame?: (run: () => void) => unknown }).requestAnimationFrame;
const schedule: (run: () => void) => void = frame ? (run) => void frame.call(globalThis, run) : queueMicrotask;

/** A store for `useSyncExternalStore`: a stable snapshot, refreshed at most once per frame. */
export interface SnapshotStore<State> {
  subscribe(onChange: () => void): () => void;
  get(): ClientSnapshot<State>;
}

/**
 * @param client - the client to watch
 * @returns a store whose snapshot only changes when a watched value did
 */
export function createSnapshotStore<State>(client: Watched<State>): SnapshotStore<State> {
  let snapshot = take(client);
  const refresh = (onChange: () => void) => {
    const next = take(client);
    if (same(next, snapshot)) return;
    snapshot = next;
    onChange();
  };
  return {
    subscribe(onChange) {
      let scheduled = false;
      let active = true;
      const off = client.subscribe(() => {
        if (scheduled) return;
        scheduled = true;
        schedule(() => {
          scheduled = false;
          if (active) refresh(onChange);
        });
      });
      refresh(onChange); // anything that changed between render and subscribe
      return () => {
        active = false;
        off();
      };
    },
    get: () => snapshot,
  };
}
