// State values of several MB as real clients see them: Node's WebSocket over loopback to the
// worker started by wrangler, the object evicted the way hibernation does (evict.route.ts). A
// multi-MB state is stored across SQLite rows, survives the eviction and reaches a new client in
// its connect frames; a client's state frame over State's limit gets the protocol's state error;
// a message over the runtime's 32 MiB limit is closed by the runtime with 1009. None of it
// disturbs the stored value or the other connections.
import { expect, it } from "vitest";
import { MAX_STATE_BYTES } from "../src/state";
import { evict, type FrameSocket, frameSocket } from "./helpers";

const REJECTED = '{"type":"cf_agent_state_error","error":"State update rejected"}';

/** Node's WebSocket to a DokitAgent, open, with a queue of the text frames it received. */
async function connect(name: string): Promise<FrameSocket> {
  const socket = frameSocket(`/agents/dokit-agent/${name}`, 10_000);
  await socket.opened;
  return socket;
}

/** @returns the connect frames after identity: the state frame's text, then the welcome frame is read */
async function connectFrames(socket: FrameSocket, name: string): Promise<string> {
  expect(JSON.parse(await socket.next())).toEqual({ type: "cf_agent_identity", name, agent: "dokit-agent", stateFollows: true });
  const state = await socket.next();
  expect(JSON.parse(await socket.next())).toMatchObject({ type: "welcome" });
  return state;
}

/** A state of about `bytes` bytes as JSON, with multi-byte characters, and its state frame as the server sends it. */
function bigState(bytes: number): { frame: string; state: { count: number; rows: string[] } } {
  const row = "é😀-".padEnd(1000, "abcdefghij");
  const state = { count: 5, rows: Array.from({ length: Math.floor(bytes / 1010) }, (_, i) => `${i}:${row}`) };
  return { frame: JSON.stringify({ type: "cf_agent_state", state }), state };
}

it("sends a 5 MB state to a new client after an eviction, and answers a state frame over the limit with the state error", async () => {
  const name = `state-size-${Date.now()}`;
  const writer = await connect(name);
  const watcher = await connect(name);
  for (const socket of [writer, watcher]) expect(await connectFrames(socket, name)).toBe('{"type":"cf_agent_state","state":{"count":0}}');

  // A client's 5 MB change is stored and broadcast to the others (not back to its sender).
  const five = bigState(5 * 1024 * 1024);
  writer.ws.send(five.frame);
  writer.ws.send("echo:after the change");
  expect(await writer.next()).toBe("echo:after the change");
  expect((await watcher.next()) === five.frame).toBe(true);

  // After an eviction a new client receives it whole in its connect frames.
  await evict(name);
  const reader = await connect(name);
  const received = await connectFrames(reader, name);
  expect(received.length).toBe(five.frame.length);
  expect(JSON.parse(received)).toEqual({ type: "cf_agent_state", state: five.state });

  // Over State's limit but within one WebSocket message: the sender gets the protocol's state error.
  const over = JSON.stringify({ type: "cf_agent_state", state: "x".repeat(MAX_STATE_BYTES - 1) });
  expect(over.length).toBeLessThanOrEqual(32 * 1024 * 1024);
  writer.ws.send(over);
  expect(await writer.next()).toBe(REJECTED);
  // The refusal is followed by the stored value, to the sender only.
  expect((await writer.next()) === five.frame).toBe(true);

  // Over the runtime's message limit: the runtime closes that socket with 1009 before the object sees it.
  const huge = JSON.stringify({ type: "cf_agent_state", state: "x".repeat(32 * 1024 * 1024) });
  watcher.ws.send(huge);
  expect(await watcher.closed).toEqual({ code: 1009, reason: `Message is too large: ${huge.length} > 33554432` });

  // The stored value is untouched and the other connections carry on.
  reader.ws.send("echo:still here");
  expect(await reader.next()).toBe("echo:still here");
  writer.ws.send("echo:writer too");
  expect(await writer.next()).toBe("echo:writer too");
  await evict(name);
  const last = await connect(name);
  expect((await connectFrames(last, name)) === five.frame).toBe(true);
}, 60_000);
