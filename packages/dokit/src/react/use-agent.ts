// useAgent: an AgentClient owned by a component, with reactive state and ready.
import { useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import { AgentClient } from "../client/client";
import type { AgentConnectionError } from "../client/errors";
import type { AgentCall, AgentClientOptions, AgentClientStub } from "../client/types";
import type { MCPServersState } from "../protocol/mcp-client";
import { createSnapshotStore } from "./snapshot";

/** Options of {@link useAgent}: the client's options plus socket event callbacks. */
export interface UseAgentOptions<State = unknown> extends AgentClientOptions<State> {
  /** Runs when a socket opens. */
  onOpen?: (event: Event) => void;
  /** Runs for every frame from the server, protocol frames included. */
  onMessage?: (event: MessageEvent) => void;
  /** Runs when a socket closes. */
  onClose?: (event: Event) => void;
  /** Runs when a socket reports an error. */
  onError?: (event: Event) => void;
  /** Reconnect with a fresh `query()` when these values change (as with the official hook). */
  queryDeps?: unknown[];
}

/** What {@link useAgent} returns: the client's members, with `state` and `ready` reactive. */
export interface UseAgentResult<T, State, Presence = unknown> {
  /** The kebab-case agent name. */
  readonly agent: string;
  /** The object's name. */
  readonly name: string;
  /** The connection id (`_pk`). */
  readonly id: string;
  /** The synced state; re-renders when it changes. */
  readonly state: State | undefined;
  /** The object's MCP servers and catalogue (`cf_agent_mcp_servers`); re-renders when they change. */
  readonly mcp: MCPServersState | undefined;
  /** Whether the current socket is identified. */
  readonly identified: boolean;
  /** Resolves when the current socket is identified; a new promise per socket. */
  readonly ready: Promise<void>;
  /** Why the connection ended for good, if it did. */
  readonly connectionError: AgentConnectionError | null;
  /** Replaces the state (optimistic, rolled back if refused). */
  readonly setState: (state: State) => void;
  /** Calls a method. */
  readonly call: AgentCall<T>;
  /** The typed stub. */
  readonly stub: AgentClientStub<T>;
  /** Sends an ordinary message. */
  readonly send: (data: string | ArrayBuffer | ArrayBufferView<ArrayBuffer>) => void;
  /** Closes the connection for good. */
  readonly close: (code?: number, reason?: string) => void;
  /** Connects again now. */
  readonly reconnect: () => void;
  /** The underlying client. */
  readonly client: AgentClient<T, State, Presence>;
}

/** @returns the options that decide which object the client talks to; a change makes a new client */
function connectionKey(options: UseAgentOptions<never>): string {
  const { agent, name, host, prefix, basePath, path, id, protocol, transport, query, queryDeps } = options;
  const staticQuery = typeof query === "function" ? "fn" : query;
  return JSON.stringify([agent, name, host, prefix, basePath, path, id, protocol, transport, staticQuery, queryDeps]);
}

/**
 * Connects a component to an object. The connection opens on mount, closes on
 * unmount, and is replaced when the address options change; callbacks may
 * change freely between renders.
 * @param options - the client's options, plus `onOpen`/`onMessage`/`onClose`/`onError`
 * @returns the client's members with reactive `state` and `ready`
 */
export function useAgent<T = unknown, State = unknown, Presence = unknown>(
  options: UseAgentOptions<State>,
): UseAgentResult<T, State, Presence> {
  const latest = useRef(options);
  latest.current = options;
  const key = connectionKey(options);

  // Created closed, so a render React throws away (StrictMode, Suspense) leaves no socket behind.
  // Keyed on `key` alone: it captures every option that addresses the object; callbacks go through `latest`.
  const client = useMemo(
    () =>
      new AgentClient<T, State, Presence>({
        ...options,
        startClosed: true,
        query: typeof options.query === "function" ? () => (latest.current.query as () => never)() : options.query,
        onStateUpdate: (state, source) => latest.current.onStateUpdate?.(state, source),
        onStateUpdateError: (error) => latest.current.onStateUpdateError?.(error),
        onIdentity: (name, agent) => latest.current.onIdentity?.(name, agent),
        onMcpUpdate: (mcp) => latest.current.onMcpUpdate?.(mcp),
        onFrameError: (error) => (latest.current.onFrameError ? latest.current.onFrameError(error) : console.warn(error.message)),
        onPresenceError: (error) =>
          latest.current.onPresenceError ? latest.current.onPresenceError(error) : console.warn(`dokit: presence value refused: ${error}`),
        onConnectionError: (error) => latest.current.onConnectionError?.(error),
        // Given on the first render or never: without one, the client's own warning reports failed attempts.
        onConnectFailure: options.onConnectFailure && ((error, retry) => latest.current.onConnectFailure?.(error, retry)),
      }),
    [key],
  );
  const store = useMemo(() => createSnapshotStore(client), [client]);
  const snapshot = useSyncExternalStore(store.subscribe, store.get, store.get);

  useEffect(() => {
    const listeners: Array<[string, (event: Event) => void]> = [
      ["open", (event) => latest.current.onOpen?.(event)],
      ["message", (event) => latest.current.onMessage?.(event as MessageEvent)],
      ["close", (event) => latest.current.onClose?.(event)],
      ["error", (event) => latest.current.onError?.(event)],
    ];
    for (const [type, listener] of listeners) client.addEventListener(type, listener);
    client.reconnect();
    return () => {
      for (const [type, listener] of listeners) client.removeEventListener(type, listener);
      client.close();
    };
  }, [client]);

  return useMemo(
    () => ({
      ...snapshot,
      id: client.id,
      setState: (state: State) => client.setState(state),
      call: client.call,
      stub: client.stub,
      send: (data: string | ArrayBuffer | ArrayBufferView<ArrayBuffer>) => client.send(data),
      close: (code?: number, reason?: string) => client.close(code, reason),
      reconnect: () => client.reconnect(),
      client,
    }),
    [client, snapshot],
  );
}
