import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { connectionAttachment, hibernate, openSocket, type TestSocket } from "../../src/testing";
import type { Connection } from "../../src/websockets";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
/**
 * Opens a connection and reads its connect sequence (identity, the state's frame, the greeter's frame)
 * and its first tally (the Votes plug-in's onConnect).
 */
async function open(name: string, id: string): Promise<{ socket: TestSocket; tally: unknown }> {
  const socket = await openSocket(worker, `http://example.com/agents/ws-votes/${name}`, { query: { _pk: id } });
  expect(await socket.frames(3)).toEqual([
    { type: "cf_agent_identity", name, agent: "ws-votes", stateFollows: true, greeting: "hi" },
    { type: "cf_agent_state", state: { round: 1 } },
    { type: "greet" },
  ]);
  return { socket, tally: await socket.nextJSON() };
}
const ASK = new Uint8Array([0x56]).buffer;

describe("a user-written connection plug-in (docs/websockets.md)", () => {
  it("claims its frame and its binary messages, keeps its slot across hibernation, and leaves the rest to onMessage", async () => {
    const name = fresh("votes");
    const { socket: a, tally: first } = await open(name, "a");
    expect(first).toEqual({ type: "tally", tally: {} });
    const { socket: b } = await open(name, "b");
    a.send({ type: "vote", choice: "tea" });
    expect(await a.nextJSON()).toEqual({ type: "tally", tally: { tea: 1 } });
    expect(await b.nextJSON()).toEqual({ type: "tally", tally: { tea: 1 } });
    // The vote sits in the connection's attachment, beside dokit's flags, under the slot's name.
    const attachment = await runInDurableObject(env.WS_VOTES.getByName(name), (instance) =>
      connectionAttachment(instance.webSockets.getConnection("a") as WebSocket),
    );
    expect(attachment).toMatchObject({ __dokit: { id: "a", vote: "tea" } });
    // A vote the plug-in declines, and binary messages it does not claim, reach onMessage.
    b.send({ type: "vote", choice: 7 });
    expect(await b.next()).toBe('unclaimed:{"type":"vote","choice":7}');
    b.send(new Uint8Array([1, 2, 3]).buffer);
    expect(await b.next()).toBe("unclaimed:3 bytes");

    b.send("constructed");
    const before = Number(await b.next());
    await hibernate(env.WS_VOTES.getByName(name));
    // After the eviction a new instance answers: the binary claim and the slot work from the attachment.
    b.send(ASK);
    expect(await b.nextJSON()).toEqual({ type: "tally", tally: { tea: 1 } });
    b.send("constructed");
    expect(Number(await b.next())).toBeGreaterThan(before);
    b.send({ type: "vote", choice: "coffee" });
    expect(await b.nextJSON()).toEqual({ type: "tally", tally: { tea: 1, coffee: 1 } });
    expect(await a.nextJSON()).toEqual({ type: "tally", tally: { tea: 1, coffee: 1 } });
    await a.close();
    await b.close();
  });

  it("bounds and checks a slot's values, and refuses a name of dokit's own flags or one claimed twice", async () => {
    const name = fresh("votes-slots");
    const { socket } = await open(name, "a");
    await runInDurableObject(env.WS_VOTES.getByName(name), (instance) => {
      const connection = instance.webSockets.getConnection("a") as Connection;
      const slot = instance.votes.vote;
      expect(() => slot.set(connection, "x".repeat(40))).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
      expect(slot.get(connection)).toBeUndefined();
      // A value the slot's check refuses (stored by another version, say) reads as unset.
      (slot as unknown as { set(connection: Connection, value: unknown): void }).set(connection, 42);
      expect(slot.get(connection)).toBeUndefined();
      const door = instance.votes.door;
      expect(() => door.slot("readonly")).toThrow(expect.objectContaining({ code: "RESERVED_NAME" }));
      expect(() => door.slot("vote")).toThrow(expect.objectContaining({ code: "DUPLICATE_CLAIM" }));
      expect(instance.webSockets.plugin("votes")).toBe(instance.votes);
    });
    await socket.close();
  });

  it("counts every inbound message first (drops) and hears each accept (accepted), its slot kept across hibernation", async () => {
    const name = fresh("bouncer");
    const stub = env.WS_VOTES.getByName(name);
    const { socket } = await open(name, "loud");
    socket.send("accepts");
    expect(await socket.next()).toBe("accepts:1");
    socket.send("shout");
    expect(await socket.next()).toBe("strike:1");
    await hibernate(stub);
    // The strike was kept in the slot; the dropped shouts reached no frame claim and no onMessage.
    socket.send("shout");
    expect(await socket.next()).toBe("strike:2");
    expect((await socket.closed).code).toBe(4000);
    expect(await socket.drain()).toEqual([]);
    expect(await runInDurableObject(stub, (instance) => [instance.webSockets.plugin("bouncer")?.pluginName, instance.webSockets.count()])).toEqual(["bouncer", 0]);
  });

  it("adds fields to the identity frame and a frame right after it (identity, then the state's frame, then its own), and the state syncs as a plug-in", async () => {
    const name = fresh("greeter");
    const stub = env.WS_VOTES.getByName(name);
    // open() checks the connect sequence: the identity keeps its own type, the state's frame comes first.
    const { socket: a } = await open(name, "a");
    const { socket: b } = await open(name, "b");
    await hibernate(stub);
    await runInDurableObject(stub, (instance) => {
      expect(instance.webSockets.plugin("state")?.pluginName).toBe("state");
      // A change goes out through the state's plug-in (the door's protocol broadcast) to everyone;
      // a broadcastState of the value just sent sends nothing; sendState sends it to one connection.
      instance.round.set({ round: 2 });
      instance.webSockets.broadcastState();
      const connection = instance.webSockets.getConnection("a");
      if (connection) instance.webSockets.sendState(connection);
    });
    expect(await a.frames(2)).toEqual([{ type: "cf_agent_state", state: { round: 2 } }, { type: "cf_agent_state", state: { round: 2 } }]);
    expect(await b.nextJSON()).toEqual({ type: "cf_agent_state", state: { round: 2 } });
    b.send("hello");
    expect(await b.next()).toBe("unclaimed:hello");
    await a.close();
    await b.close();
  });

  it("after a wake with nothing changed, broadcastState sends the current value to everyone and sendState to one", async () => {
    const name = fresh("greeter-wake");
    const stub = env.WS_VOTES.getByName(name);
    const { socket: a } = await open(name, "a");
    const { socket: b } = await open(name, "b");
    await hibernate(stub);
    await runInDurableObject(stub, (instance) => {
      instance.webSockets.broadcastState();
      const connection = instance.webSockets.getConnection("a");
      if (connection) instance.webSockets.sendState(connection);
    });
    expect(await a.frames(2)).toEqual([{ type: "cf_agent_state", state: { round: 1 } }, { type: "cf_agent_state", state: { round: 1 } }]);
    expect(await b.nextJSON()).toEqual({ type: "cf_agent_state", state: { round: 1 } });
    await a.close();
    await b.close();
  });
});
