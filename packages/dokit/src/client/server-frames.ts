// What the server's protocol frames do to a client: identity, state (and its
// rollback after a refusal), the MCP servers frame, rpc answers, presence and
// dokit's error frames that concern the client. Each frame
// is read field by field first (read-frame.ts); a malformed one is reported,
// never thrown.
import { DOKIT_ERROR } from "../protocol/dokit-error";
import { IDENTITY, RPC, STATE, STATE_ERROR } from "../protocol/agents";
import { MCP_SERVERS, type MCPServersState } from "../protocol/mcp-client";
import { PRESENCE, PRESENCE_REJECTED } from "../protocol/presence";
import type { PendingCall } from "./calls";
import type { PresenceFrames } from "./presence";
import { AgentFrameError } from "./errors";
import { readFrame, type ServerFrame, type Unreadable } from "./read-frame";
import type { AgentClientOptions } from "./types";

/** The identity a server sends first. */
export type Identity = { name: string; agent: string };

/** The members of the client the frames change. */
export interface FrameTarget<State> {
  state: State | undefined;
  mcp: MCPServersState | undefined;
  readonly presence: PresenceFrames;
  readonly options: AgentClientOptions<State>;
}

/** Reads one client's frames: `read` acts on a text frame, `reset` forgets a held identity when a socket closes. */
export interface FrameReader {
  read(text: string): void;
  reset(): void;
}

/**
 * @param client - the client whose members the frames change
 * @param calls - its pending calls, by id
 * @param changed - tells the client that something changed; with an identity, that its socket is now identified
 * @returns the reader of that client's frames
 */
export function serverFrames<State>(
  client: FrameTarget<State>,
  calls: ReadonlyMap<string, PendingCall>,
  changed: (identity?: Identity) => void,
): FrameReader {
  /** An identity with `stateFollows`, held until its state frame arrives. */
  let pending: Identity | undefined;
  /** The server's last state: what a refused update rolls back to. */
  let serverState: State | undefined;

  /** Acts on a text frame; an ordinary message (not a protocol frame) is left to `message` listeners. */
  function read(text: string): void {
    const frame = readFrame(text);
    if (frame === undefined) return;
    const options = client.options;
    if ("problem" in frame) return reportUnreadable(frame, calls, options);
    switch (frame.type) {
      // {"type":"cf_agent_identity","name","agent","stateFollows"?:true}
      case IDENTITY: {
        const identity = { name: frame.name, agent: frame.agent };
        if (frame.stateFollows) pending = identity;
        else changed(identity);
        return;
      }
      // {"type":"cf_agent_state","state"}
      case STATE:
        return state(frame.state);
      // {"type":"cf_agent_state_error","error"}: roll back to the server's value
      case STATE_ERROR: {
        client.state = serverState;
        options.onStateUpdate?.(serverState as State, "server");
        options.onStateUpdateError?.(frame.error);
        changed();
        return;
      }
      // {"type":"cf_agent_mcp_servers","mcp":{servers,tools,prompts,resources}}
      case MCP_SERVERS: {
        client.mcp = frame.mcp;
        try {
          options.onMcpUpdate?.(frame.mcp);
        } finally {
          changed();
        }
        return;
      }
      case RPC:
        return answer(frame, calls);
      case PRESENCE:
      case DOKIT_ERROR:
        return toPresence(frame, client.presence);
    }
  }

  /** The state frame: the new value, then the identity it completes (the connect sequence's end). */
  function state(value: unknown): void {
    // SAFETY: the server's state has the type the client was made with (the server validates what it stores).
    client.state = serverState = value as State;
    try {
      client.options.onStateUpdate?.(serverState, "server");
    } finally {
      const identity = pending;
      pending = undefined;
      changed(identity);
    }
  }

  return { read, reset: () => void (pending = undefined) };
}

/** A frame the client cannot read: reported (`onFrameError`, else a warning); a malformed answer still settles its call. */
function reportUnreadable(frame: Unreadable, calls: ReadonlyMap<string, PendingCall>, options: AgentClientOptions<never>): void {
  const error = new AgentFrameError(frame.type, frame.problem);
  // Settled now, so it does not wait for a timeout (a stream has none).
  if (frame.id !== undefined) calls.get(frame.id)?.fail(new Error(`Malformed rpc frame from the server: ${frame.problem}`));
  if (options.onFrameError) options.onFrameError(error);
  else console.warn(error.message);
}

/** `{"type":"rpc","id","success","done"?,"result"?,"error"?}`: settles (or feeds) its pending call. */
function answer(frame: Extract<ServerFrame, { type: typeof RPC }>, calls: ReadonlyMap<string, PendingCall>): void {
  const call = calls.get(frame.id);
  if (!call) return; // timed out, or rejected when its socket closed
  if (!frame.success) call.fail(new Error(frame.error));
  else if (!frame.done) call.chunk(frame.result);
  else call.succeed(frame.result);
}

/**
 * `{"type":"dokit_presence","you","all"}` (a snapshot), `{"type":"dokit_presence","set"?,"left"?}` (a tick's
 * changes), or `{"type":"dokit_error","code","error"}`: a refused presence value (other codes are the app's to
 * read as messages).
 */
function toPresence(frame: Extract<ServerFrame, { type: typeof PRESENCE | typeof DOKIT_ERROR }>, presence: PresenceFrames): void {
  if (frame.type === DOKIT_ERROR) {
    if (frame.code === PRESENCE_REJECTED) presence.rejected(frame.error);
  } else if (frame.you !== undefined) presence.snapshot(frame.you, frame.all);
  else presence.changes(frame.set, frame.left);
}
