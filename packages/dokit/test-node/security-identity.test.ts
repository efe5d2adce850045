// What a connection's id lets others do, over loopback: a connection id (`_pk`) is its client's
// secret, and dokit shows other clients only the public id derived from it. A watcher that keeps
// every frame dokit sends it (presence snapshots and changes, room messages) and then connects
// with each id it saw can neither replace the victim (4009), nor speak as it (`from`), nor take
// over or erase its presence entry. The room (rooms-presence.objects.ts) has a Presence on its
// shard, so one watcher sees both.
import { describe, expect, inject, it } from "vitest";
import { RoomMember, type RoomMessage } from "../src/client";
import { closedAfterEach, fresh, sleep, untilRoom as until } from "./helpers";

const base = new URL(inject("workerUrl"));
const members = closedAfterEach();

type Frame = Record<string, unknown>;

/** A Node WebSocket that keeps every text frame it receives, as text and parsed. */
function rawClient(path: string) {
  const url = new URL(path, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  const texts: string[] = [];
  const closes: number[] = [];
  ws.addEventListener("message", (event) => texts.push(String(event.data)));
  ws.addEventListener("close", (event) => closes.push(event.code));
  members.push({ close: () => ws.readyState < 2 && ws.close() });
  return {
    ws,
    texts,
    closes,
    frames: (): Frame[] => texts.filter((text) => text.startsWith("{")).map((text) => JSON.parse(text) as Frame),
    send: (frame: Frame) => ws.send(JSON.stringify(frame)),
    opened: new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve());
      ws.addEventListener("error", reject);
    }),
  };
}

/** @returns the presence a client's frames add up to: a snapshot replaces, changes patch */
function presenceOf(frames: Frame[]): Map<string, unknown> {
  let entries = new Map<string, unknown>();
  for (const frame of frames) {
    if (frame.type !== "dokit_presence") continue;
    if (Array.isArray(frame.all)) entries = new Map(frame.all as [string, unknown][]);
    for (const [id, value] of (frame.set as [string, unknown][] | undefined) ?? []) entries.set(id, value);
    for (const id of (frame.left as string[] | undefined) ?? []) entries.delete(id);
  }
  return entries;
}

/** @returns every id a client was shown of others: presence keys (`you`, `all`, `set`, `left`) and room messages' `from` */
function idsShown(frames: Frame[]): Set<string> {
  const ids = new Set<string>();
  for (const frame of frames) {
    if (typeof frame.you === "string") ids.add(frame.you);
    for (const [id] of [...((frame.all as [string][] | undefined) ?? []), ...((frame.set as [string][] | undefined) ?? [])]) ids.add(id);
    for (const id of (frame.left as string[] | undefined) ?? []) ids.add(id);
    if (frame.type === "dokit_room" && typeof frame.from === "string") ids.add(frame.from);
  }
  return ids;
}

describe("connection ids are not shown to other clients", () => {
  it("a watcher that connects with every id dokit showed it cannot replace, silence or speak as the victim", async () => {
    const room = fresh("ident");
    const path = `/rooms-presence/${room}?shards=1`;
    const victimSaw: RoomMessage<{ text: string }>[] = [];
    const victimCloses: number[] = [];
    // The victim: dokit's client, with the random id it makes itself.
    const victim = new RoomMember<{ text: string }>({ host: base.host, basePath: `rooms-presence/${room}`, query: { shards: "1" }, onRoomMessage: (message) => victimSaw.push(message) });
    members.push(victim);
    victim.client.addEventListener("close", (event) => victimCloses.push((event as CloseEvent).code));
    await until(() => victim.shard === 0, "the victim joined");
    victim.client.presence.set({ name: "Victim" });
    victim.client.presence.watch();

    const watcher = rawClient(`${path}&_pk=watcher-${room}`);
    await watcher.opened;
    watcher.send({ type: "dokit_presence", watch: true });
    expect(await victim.publish({ text: "hello" })).toBe(1);
    await until(() => watcher.frames().some((frame) => frame.type === "dokit_room") && [...presenceOf(watcher.frames()).values()].some((value) => (value as { name: string }).name === "Victim"), "the victim's message and presence on the watcher");
    // Nothing the watcher received carries the victim's connection id.
    expect(watcher.texts.filter((text) => text.includes(victim.client.id))).toEqual([]);
    const shown = idsShown(watcher.frames());
    expect(victim.self).toBeDefined();
    expect(shown.has(victim.self as string)).toBe(true);

    // The attack: connect with each id shown, be present under it and publish.
    const attackers = [...shown].filter((id) => id !== `watcher-${room}`).map((id) => rawClient(`${path}&_pk=${encodeURIComponent(id)}`));
    await Promise.all(attackers.map((attacker) => attacker.opened));
    for (const attacker of attackers) {
      attacker.send({ type: "dokit_presence", value: { name: "Mallory" } });
      attacker.send({ type: "dokit_room_publish", id: `${victim.client.id}:1`, data: { text: "evil" } });
    }
    await until(() => attackers.every((attacker) => attacker.frames().some((frame) => frame.type === "dokit_room_ack")), "every attacker's publish acknowledged");
    await sleep(300); // a presence tick and any replacement close

    // The victim is open, was never closed, and still speaks as itself.
    expect(victimCloses).toEqual([]);
    expect(victim.client.readyState).toBe(1);
    expect(await victim.publish({ text: "still me" })).toBeGreaterThan(1);
    await until(() => victimSaw.some((message) => message.data.text === "still me"), "the victim's second message");
    const mine = victimSaw.filter((message) => message.from === victim.self).map((message) => message.data.text);
    expect(mine).toEqual(["hello", "still me"]);
    // The attackers' messages do not carry the victim's `from`.
    const evil = victimSaw.filter((message) => message.data.text === "evil");
    expect(evil).toHaveLength(attackers.length);
    expect(evil.every((message) => message.from !== victim.self)).toBe(true);
    // The victim's presence entry is its own, on the watcher and on the victim's own list.
    expect(presenceOf(watcher.frames()).get(victim.self as string)).toEqual({ name: "Victim" });
    expect(victim.client.presence.get(victim.self as string)).toEqual({ name: "Victim" });
    expect(victim.client.presence.self).toBe(victim.self);
  });

  it("keeps a connection's public id across its own reconnect: the same `from` and presence entry", async () => {
    const room = fresh("ident-again");
    let joins = 0;
    const member = new RoomMember<string>({ host: base.host, basePath: `rooms-presence/${room}`, query: { shards: "1" }, onJoin: () => joins++ });
    members.push(member);
    await until(() => member.shard === 0 && member.self !== undefined, "the member joined");
    member.client.presence.set({ name: "Ada" });
    const first = member.self;
    const watcher = rawClient(`/rooms-presence/${room}?shards=1&_pk=w-${room}`);
    await watcher.opened;
    watcher.send({ type: "dokit_presence", watch: true });
    await until(() => presenceOf(watcher.frames()).get(first as string) !== undefined, "the member's presence on the watcher");
    member.client.reconnect();
    await until(() => joins === 2, "the member joined again");
    expect(await member.publish("after")).toBe(1);
    await until(() => watcher.frames().some((frame) => frame.type === "dokit_room"), "the message on the watcher");
    expect(member.self).toBe(first);
    expect(watcher.frames().find((frame) => frame.type === "dokit_room")).toMatchObject({ from: first, data: "after" });
    expect(presenceOf(watcher.frames()).get(first as string)).toEqual({ name: "Ada" });
  });
});
