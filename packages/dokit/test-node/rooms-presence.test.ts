// Room-wide presence and count frames over loopback: the dokit client's `client.presence` and
// RoomMember against a real worker whose rooms have 2 shards, each with a Presence
// (rooms-presence.objects.ts). The client code is the one used against a single object.
import { describe, expect, inject, it } from "vitest";
import { RoomMember } from "../src/client";
import { createRoom } from "../src/react/use-room";
import { publicIdOf as pub } from "../test/public-id";
import { closedAfterEach, fresh, untilRoom as until } from "./helpers";

const base = new URL(inject("workerUrl"));
const members = closedAfterEach();


type Name = { name: string };
/** The connection ids of the members below, by the public id presence shows of them. */
const idOf = (publicId: string) => ["a", "b", "c"].find((id) => pub(id) === publicId) ?? publicId;

describe("room-wide presence and counts (dokit/client) over loopback", () => {
  it("shows client.presence the connections of every shard, and keeps RoomMember's count up to date", async () => {
    const room = fresh("loop-presence");
    const counts: Record<string, number[]> = {};
    const join = (id: string, shard: number) => {
      counts[id] = [];
      const member = new RoomMember<Name>({
        host: base.host,
        basePath: `rooms-presence/${room}`,
        id,
        query: { shards: "2", shard: String(shard) },
        onCount: (count) => counts[id]?.push(count),
      });
      members.push(member);
      return member;
    };
    const a = join("a", 0);
    const b = join("b", 1);
    const c = join("c", 1);
    await until(() => a.shard === 0 && b.shard === 1 && c.shard === 1, "three joined on two shards");
    const names = (member: RoomMember<Name>) =>
      member.client.presence
        .list()
        .map((entry) => `${idOf(entry.id)}=${(entry.value as Name).name}`)
        .sort()
        .join();
    a.client.presence.set({ name: "Ada" });
    b.client.presence.set({ name: "Bob" });
    c.client.presence.set({ name: "Cy" });
    // a is alone on shard 0: b and c reach it through the room.
    await until(() => names(a) === "a=Ada,b=Bob,c=Cy", "everyone in a's presence");
    await until(() => names(b) === "a=Ada,b=Bob,c=Cy", "everyone in b's presence");
    expect(a.client.presence.others().map((entry) => idOf(entry.id)).sort()).toEqual(["b", "c"]);
    // The room-wide count reached a with a count frame (its welcome may have said less).
    await until(() => a.count === 3, "a count of 3 on a");

    // An update and a leave on shard 1, seen on shard 0 by the client's change events.
    const changes: string[] = [];
    a.client.presence.subscribe((change) => {
      for (const entry of change.updated) changes.push(`updated ${idOf(entry.id)}=${(entry.value as Name).name}`);
      for (const id of change.left) changes.push(`left ${idOf(id)}`);
    });
    b.client.presence.set({ name: "Bobby" });
    await until(() => changes.includes("updated b=Bobby"), "b's update on a");
    c.close();
    await until(() => changes.includes("left c"), "c's leave on a");
    expect(names(a)).toBe("a=Ada,b=Bobby");
    // The count follows, and onCount saw it fall.
    await until(() => a.count === 2 && counts.a?.at(-1) === 2, "a count of 2 on a");

    // Many joins on shard 1 reach a as few count frames (the shard's countMs is 100 ms).
    const before = counts.a?.length ?? 0;
    const start = Date.now();
    for (let i = 0; i < 8; i++) join(`m${i}`, 1);
    await until(() => a.count === 10, "a count of 10 on a");
    const frames = (counts.a?.length ?? 0) - before;
    expect(frames).toBeGreaterThanOrEqual(1);
    expect(frames).toBeLessThanOrEqual(Math.floor((Date.now() - start) / 100) + 1);
    expect(frames).toBeLessThan(8);
  });

  it("re-renders useRoom's store with the count when other shards' connections come and go", async () => {
    const room = fresh("loop-room-count");
    const options = { host: base.host, basePath: `rooms-presence/${room}`, id: "watcher", query: { shards: "2", shard: "0" } };
    const made = createRoom<unknown>(options, () => options);
    let renders = 0;
    made.store.subscribe(() => renders++);
    const stop = made.start();
    members.push({ close: stop });
    await until(() => made.store.get().joined && made.store.get().count === 1, "the watcher joined alone");
    // Its own public id, the `from` of its messages (never its connection id).
    expect(made.store.get().self).toBe(pub("watcher"));
    const other = new RoomMember({ host: base.host, basePath: `rooms-presence/${room}`, id: "other", query: { shards: "2", shard: "1" } });
    members.push(other);
    const seen = renders;
    await until(() => made.store.get().count === 2, "a count of 2 in the store");
    expect(renders).toBeGreaterThan(seen);
    other.close();
    await until(() => made.store.get().count === 1, "a count of 1 in the store");
  });
});
