// useRoom (dokit/react) over loopback: the store a component renders from, fed by a real RoomMember
// through the Worker's room router; a drained shard shows as a drain, and the messages go on, once each.
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { RoomMessage } from "../src/client";
import { useRoom } from "../src/react";
import { createRoom } from "../src/react/use-room";
import { fresh, sleep } from "./helpers";

const base = new URL(inject("workerUrl"));
const leave: (() => void)[] = [];
afterEach(() => {
  for (const stop of leave.splice(0)) stop();
});

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await sleep(10)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

describe("useRoom (dokit/react) over loopback", () => {
  it("renders the room's messages, last seq, shard and count; a drain is counted and reported, and the messages go on once each", async () => {
    const room = fresh("loop-use-room");
    let shards = 2;
    const drained: string[] = [];
    const seen: RoomMessage<number>[] = [];
    const join = (id: string, shard: string) => {
      const options = {
        host: base.host,
        basePath: `rooms/${room}`,
        id,
        query: () => ({ shards: String(shards), shard }),
        minReconnectionDelay: 50,
        maxReconnectionDelay: 200,
        keep: 3,
        onDrain: () => drained.push(id),
        onRoomMessage: (message: RoomMessage<number>) => void (id === "b" && seen.push(message)),
      };
      const joined = createRoom<number>(options, () => options);
      let renders = 0;
      joined.store.subscribe(() => renders++);
      leave.push(joined.start());
      return { ...joined, renders: () => renders };
    };
    const a = join("a", "0");
    const b = join("b", "1");
    // Created closed: nothing until start(); then joined, each on its shard.
    await until(() => a.store.get().joined && b.store.get().joined, "both joined");
    expect([a.store.get().shard, b.store.get().shard]).toEqual([0, 1]);
    expect(await Promise.all([1, 2, 3, 4].map((n) => a.member.publish(n)))).toEqual([1, 2, 3, 4]);
    await until(() => b.store.get().seq === 4, "1..4 on b");
    // keep: 3 — the newest three, in order; the callback saw all four.
    expect(b.store.get().messages.map((message) => message.data)).toEqual([2, 3, 4]);
    expect(seen.map((message) => message.seq)).toEqual([1, 2, 3, 4]);
    const before = b.store.get();
    expect(b.renders()).toBeGreaterThan(0);

    shards = 1;
    expect(await (await fetch(new URL(`/rooms/${room}/drain?shard=1`, base), { method: "POST" })).json()).toBe(1);
    await until(() => b.store.get().drains === 1, "b's drain");
    expect(drained).toEqual(["b"]);
    await a.member.publish(5);
    await until(() => b.store.get().joined && b.store.get().shard === 0 && b.store.get().seq === 5, "b back on shard 0 with 5");
    expect(b.store.get().messages.map((message) => message.data)).toEqual([3, 4, 5]);
    expect(seen.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(b.store.get().gaps).toEqual([]);
    // A snapshot is replaced, never changed in place (what useSyncExternalStore needs).
    expect(before.messages.map((message) => message.data)).toEqual([2, 3, 4]);
  });

  it("renders on the server without connecting: the empty room", () => {
    function Room() {
      const { messages, seq, joined, drains } = useRoom<number>({ host: base.host, basePath: "rooms/never", id: "ssr" });
      return createElement("p", null, `${messages.length} ${String(seq)} ${joined} ${drains}`);
    }
    expect(renderToString(createElement(Room))).toBe("<p>0 undefined false 0</p>");
  });
});
