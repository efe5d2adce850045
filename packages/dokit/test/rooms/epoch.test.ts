import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fresh, sleep, until } from "../helpers";
import { type Frame, RoomClient } from "./room-client";
import { crash } from "../crash";

const sequencerStub = (room: string) => env.ROOM_SEQUENCER.get(env.ROOM_SEQUENCER.idFromName(room));

/** The sequencer loses its storage, as a `deleteAll()` or a lost database would, and its instance with it. */
async function wipe(room: string): Promise<void> {
  // Reset first, so no delivery of the old instance is under way while its tables go; then reset the
  // instance that ran deleteAll(), whose constructor made the tables that deleteAll() dropped.
  const reset = () => crash(sequencerStub(room), "test: storage lost");
  await reset();
  await runInDurableObject(sequencerStub(room), (_instance, ctx) => ctx.storage.deleteAll());
  await reset();
}

/**
 * What a client saw, checked: from where it started (after `since`, else after the welcome's seq), every
 * message is the next seq, a gap frame covers what it skips, and a reset frame starts the count again at
 * 0 with a later epoch. @returns the message ids per epoch, in order
 */
function read(client: RoomClient): { epoch: string; ids: string[] }[] {
  const orders: { epoch: string; ids: string[] }[] = [];
  let last: number | undefined;
  let since: number | undefined;
  for (const frame of client.frames) {
    if (frame.type === "test_connect") since = frame.since as number | undefined;
    else if (frame.type === "dokit_room_welcome") {
      last = since ?? (frame.seq as number);
      // The order it starts in: the one its `since` counts in, else the welcome's.
      if (!orders.length) orders.push({ epoch: client.query.epoch ?? (frame.epoch as string), ids: [] });
    } else if (frame.type === "dokit_room_reset") {
      expect(frame.seq, `${client.id}: a reset starts at 0`).toBe(0);
      const previous = orders.at(-1)?.epoch ?? "";
      expect(frame.epoch as string > previous, `${client.id}: the reset's epoch is later`).toBe(true);
      orders.push({ epoch: frame.epoch as string, ids: [] });
      last = 0;
    } else if (frame.type === "dokit_room_gap") {
      expect(frame.from, `${client.id}: a gap starts after the last seq`).toBe((last ?? 0) + 1);
      last = frame.to as number;
    } else if (frame.type === "dokit_room") {
      expect(frame.seq, `${client.id}: the next seq (an untold gap or a duplicate otherwise)`).toBe((last ?? 0) + 1);
      last = frame.seq as number;
      const data = frame.data as { by: string; n: number };
      orders.at(-1)?.ids.push(`${data.by}-${data.n}`);
    }
  }
  return orders;
}

const welcomeOf = (client: RoomClient): Frame => client.frames.filter((frame) => frame.type === "dokit_room_welcome").at(-1) as Frame;

describe("a sequencer that lost its storage", () => {
  it("starts a new order, and every client is told before its messages arrive: at once, on its shard's next call, or when it resumes", async () => {
    const room = fresh("r-epoch");
    const query = { shards: "2" };
    const a = new RoomClient("a", room, query);
    const b = new RoomClient("b", room, query);
    const gone = new RoomClient("gone", room, query);
    await a.connect({ shard: 0 });
    await b.connect({ shard: 1 });
    await gone.connect({ shard: 0 });
    for (let n = 1; n <= 3; n++) a.publish(n);
    await until(() => [a, b, gone].every((client) => client.messages.length === 3), "three messages everywhere", 10_000);
    const old = welcomeOf(a).epoch as string;
    expect(old).toMatch(/^\d{15}-[0-9a-f]{8}$/);
    await gone.close();
    await wipe(room);

    // A publish on shard 0 finds the new sequencer: the shard joins its order and tells its clients first.
    a.publish(4);
    await until(() => a.messages.some((message) => message.data.n === 4), "a's message in the new order", 10_000);
    expect(a.acks.get("a-4"), "the new order numbers from 1").toBe(1);
    const fresh0 = read(a);
    expect(fresh0.map((order) => order.ids)).toEqual([["a-1", "a-2", "a-3"], ["a-4"]]);
    expect(String(fresh0[1]?.epoch) > old).toBe(true);

    // A client of the old order resumes on shard 0, which knows the new one: told, then given it from its start.
    const back = new RoomClient("gone", room, { ...query, epoch: old });
    await back.connect({ shard: 0, since: 3 });
    await until(() => back.messages.length === 1, "the new order's first message", 10_000);
    expect(back.frames.filter((frame) => frame.type.startsWith("dokit_room") && frame.type !== "dokit_room_count").map((frame) => frame.type)).toEqual(["dokit_room_welcome", "dokit_room_reset", "dokit_room"]);
    expect(read(back).map((order) => order.ids)).toEqual([[], ["a-4"]]);

    // Shard 1 has not called the sequencer since: b hears nothing yet. A client that learned the new
    // epoch on shard 0 comes to shard 1 with it: the shard learns it first, resets b, and goes on.
    await sleep(300);
    expect(b.messages.length).toBe(3);
    const mover = new RoomClient("mover", room, { ...query, epoch: fresh0[1]?.epoch as string });
    await mover.connect({ shard: 1, since: 1 });
    expect(welcomeOf(mover).epoch).toBe(fresh0[1]?.epoch);
    a.publish(5);
    await until(() => [a, b, back, mover].every((client) => client.messages.some((message) => message.data.n === 5)), "a-5 everywhere", 10_000);
    await sleep(200);
    expect(read(b).map((order) => order.ids)).toEqual([["a-1", "a-2", "a-3"], ["a-4", "a-5"]]);
    expect(read(mover).map((order) => order.ids)).toEqual([["a-5"]]);
    expect(mover.frames.some((frame) => frame.type === "dokit_room_reset")).toBe(false);
    expect(read(a).at(-1)?.ids).toEqual(["a-4", "a-5"]);
    for (const client of [a, b, back, mover]) await client.close();
  });

  it("a shard that only listens learns of the new order on its next count report (a connection arriving), and resets its clients", async () => {
    const room = fresh("r-epoch-listen");
    const query = { shards: "2" };
    const a = new RoomClient("a", room, query);
    const b = new RoomClient("b", room, query);
    await a.connect({ shard: 0 });
    await b.connect({ shard: 1 });
    a.publish(1);
    await until(() => b.messages.length === 1, "the first message", 10_000);
    await wipe(room);
    a.publish(2);
    await until(() => a.messages.length === 2, "the new order on shard 0", 10_000);
    // A new connection on shard 1 makes it report its count; the new sequencer does not list it, so it joins the new order.
    const c = new RoomClient("c", room, query);
    await c.connect({ shard: 1 });
    await until(() => b.frames.some((frame) => frame.type === "dokit_room_reset"), "b's reset", 10_000);
    await until(() => b.messages.length === 2, "the new order's message on shard 1", 10_000);
    expect(read(b).map((order) => order.ids)).toEqual([["a-1"], ["a-2"]]);
    // c joined in the old order just before: it too is reset, and gets the new order from its start.
    expect(read(c).map((order) => order.ids)).toEqual([[], ["a-2"]]);
    for (const client of [a, b, c]) await client.close();
  });
});
