// What presence queues for a watcher that does not read, over loopback: a raw client
// (raw-socket.ts) stops reading its socket and asks for a snapshot again and again (watch:false,
// watch:true). Presence answers one at a time: a snapshot only once the last answer has left the
// object's outgoing queue for that socket (`bufferedAmount`), and no changes while more than
// PRESENCE_LAG_BYTES wait. The first test checks the runtime premise (workerd counts a server
// socket's unwritten bytes, across events); the others measure the bound twice: by the count the
// runtime gives, and by what the client receives once it reads again, which needs no
// `bufferedAmount` at all.
// PresenceClientRoom (presence-client.objects.ts): `buffered` reports each connection's queue,
// `fill:<id>:<MiB>` queues a backlog of other traffic to one connection.
import { describe, expect, inject, it } from "vitest";
import { PRESENCE_LAG_BYTES } from "../src/presence";
import { publicIdOf } from "../test/public-id";
import { eventually, fresh, sleep } from "./helpers";
import { type RawSocket, rawSocket } from "./raw-socket";

const base = new URL(inject("workerUrl"));
const SNAPSHOT = '{"type":"dokit_presence","you"';

/** @returns the presence a client's frames add up to: a snapshot replaces, changes patch */
function presenceOf(texts: string[]): Map<string, unknown> {
  let entries = new Map<string, unknown>();
  for (const text of texts) {
    if (!text.startsWith('{"type":"dokit_presence"')) continue;
    const frame = JSON.parse(text) as { all?: [string, unknown][]; set?: [string, unknown][]; left?: string[] };
    if (frame.all) entries = new Map(frame.all);
    for (const [id, value] of frame.set ?? []) entries.set(id, value);
    for (const id of frame.left ?? []) entries.delete(id);
  }
  return entries;
}

/** @returns the answer of the PresenceClientRoom to `request` (sent on `probe`), the text after `<prefix>:` */
async function ask(probe: RawSocket, request: string, prefix: string): Promise<string> {
  probe.texts.length = 0;
  probe.send(request);
  await eventually(() => expect(probe.texts.some((text) => text.startsWith(`${prefix}:`))).toBe(true), { timeout: 15_000 });
  return probe.texts.find((text) => text.startsWith(`${prefix}:`))!.slice(prefix.length + 1);
}

/** @returns each connection's `bufferedAmount` as the object reads it (null: the runtime has none) */
async function bufferedOf(probe: RawSocket): Promise<Record<string, number | null>> {
  return JSON.parse(await ask(probe, "buffered", "buffered")) as Record<string, number | null>;
}

/**
 * Opens 60 present members (names of 100 characters: a snapshot of about 8.4 KB) and a watcher
 * that has its first snapshot. @returns the sockets (`open`, closed by the caller), the watcher,
 * and the snapshot's length
 */
async function room(path: string, open: RawSocket[]): Promise<{ watcher: RawSocket; snapshotBytes: number }> {
  for (let i = 0; i < 60; i++) {
    const member = await rawSocket(base, `${path}?_pk=member-${i}`);
    member.send(JSON.stringify({ type: "dokit_presence", value: { name: `${i}`.padEnd(100, ".") } }));
    open.push(member);
  }
  const watcher = await rawSocket(base, `${path}?_pk=watcher`);
  open.push(watcher);
  watcher.send('{"type":"dokit_presence","watch":true}');
  await eventually(() => expect(presenceOf(watcher.texts).size).toBe(60));
  const snapshot = watcher.texts.findLast((text) => text.startsWith(SNAPSHOT) && (JSON.parse(text) as { all: unknown[] }).all.length === 60);
  return { watcher, snapshotBytes: snapshot ? snapshot.length : Number.POSITIVE_INFINITY };
}

describe("presence and a watcher that does not read", () => {
  it("relies on the runtime counting what a server socket has not written yet: all of it in the event that sent it, what is left in later events, 0 once read", async () => {
    const path = `/agents/presence-client-room/${fresh("presence-lag-runtime")}`;
    const open: RawSocket[] = [];
    try {
      const sink = await rawSocket(base, `${path}?_pk=sink`);
      open.push(sink);
      sink.socket.pause();
      let received = 0;
      sink.socket.on("data", (chunk: Buffer) => (received += chunk.length));
      const probe = await rawSocket(base, path);
      open.push(probe);
      const { sent, buffered } = JSON.parse(await ask(probe, "fill:sink:32", "filled")) as { sent: number; buffered: number | null };
      expect(sent).toBe(32 * 1_048_576);
      // Nothing is written while the handler runs: the whole 32 MiB is counted.
      expect(buffered).toBe(sent);
      // Later events see what the socket has not taken (the kernel's buffers take some MB of it), the same in two of them.
      await sleep(1000);
      const later = (await bufferedOf(probe)).sink;
      expect(typeof later).toBe("number");
      expect(later).toBeGreaterThan(0);
      expect(later).toBeLessThanOrEqual(sent);
      await sleep(500);
      expect((await bufferedOf(probe)).sink).toBe(later);
      // Read: it all arrives, and the count is back to 0.
      sink.socket.resume();
      await eventually(() => expect(received).toBeGreaterThan(sent), { timeout: 30_000 });
      await eventually(async () => expect((await bufferedOf(probe)).sink).toBe(0), { timeout: 15_000 });
    } finally {
      for (const socket of open) socket.destroy();
    }
  }, 60_000);

  it("re-requested snapshots wait for the last one to leave: the object's queue for the watcher stays within PRESENCE_LAG_BYTES and a snapshot, and it ends up with the list", async () => {
    const path = `/agents/presence-client-room/${fresh("presence-lag")}`;
    const open: RawSocket[] = [];
    try {
      const { watcher, snapshotBytes } = await room(path, open);
      // It stops reading, and asks for the snapshot 5,000 times more (about 8 KB each: 40 MB).
      watcher.socket.pause();
      for (let i = 0; i < 5000; i++) {
        watcher.send('{"type":"dokit_presence","watch":false}');
        watcher.send('{"type":"dokit_presence","watch":true}');
      }
      const probe = await rawSocket(base, path);
      open.push(probe);
      // Once the object has taken every request (the probe's `buffered` comes after them), the watcher's queue is read.
      await sleep(500);
      let buffered = 0;
      for (let round = 0; round < 3; round++) {
        const queued = (await bufferedOf(probe)).watcher;
        expect(typeof queued).toBe("number");
        buffered = Math.max(buffered, queued!);
        await sleep(300);
      }
      expect(buffered).toBeLessThanOrEqual(PRESENCE_LAG_BYTES + snapshotBytes);

      // It reads again: its last snapshot (sent once it had read the others) is the whole list.
      const member = open[0]!;
      watcher.socket.resume();
      member.send(JSON.stringify({ type: "dokit_presence", value: { name: "renamed" } }));
      await eventually(() => expect((presenceOf(watcher.texts).get(publicIdOf("member-0")) as { name: string } | undefined)?.name).toBe("renamed"), { timeout: 15_000 });
      expect(presenceOf(watcher.texts).size).toBe(60);
    } finally {
      for (const socket of open) socket.destroy();
    }
  }, 60_000);

  it("sends a watcher with a backlog nothing more until it has read it: once it reads, it receives one snapshot for 5,000 requests and the changes it missed, counted by the client", async () => {
    const path = `/agents/presence-client-room/${fresh("presence-lag-count")}`;
    const open: RawSocket[] = [];
    try {
      const { watcher, snapshotBytes } = await room(path, open);
      const probe = await rawSocket(base, path);
      open.push(probe);
      // It stops reading with a backlog of other traffic larger than the kernel's buffers take
      // (32 MiB), so what presence sends it from now on stays in the object until it reads.
      watcher.socket.pause();
      const first = watcher.texts.length;
      const { sent } = JSON.parse(await ask(probe, "fill:watcher:32", "filled")) as { sent: number };
      // 5,000 snapshot requests (40 MB of answers if each were sent), then a value of its own,
      // which shows (in `list`) that the object has taken every request before it.
      for (let i = 0; i < 5000; i++) {
        watcher.send('{"type":"dokit_presence","watch":false}');
        watcher.send('{"type":"dokit_presence","watch":true}');
      }
      watcher.send(JSON.stringify({ type: "dokit_presence", value: { name: "watcher" } }));
      // Meanwhile ten members move, over several ticks.
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 10; i++) open[i]!.send(JSON.stringify({ type: "dokit_presence", value: { name: `moved-${round}` } }));
        await sleep(50);
      }
      await eventually(async () => expect(await ask(probe, "list", "list")).toContain('"name":"watcher"'), { timeout: 30_000 });

      // It reads again: the backlog, then presence. Once the backlog is read, member-0 moves once more.
      watcher.socket.resume();
      await eventually(() => expect(watcher.texts.slice(first).filter((text) => text.startsWith("xxxx")).length).toBe(sent / 65_536), { timeout: 30_000 });
      open[0]!.send(JSON.stringify({ type: "dokit_presence", value: { name: "renamed" } }));
      await eventually(() => expect((presenceOf(watcher.texts).get(publicIdOf("member-0")) as { name: string } | undefined)?.name).toBe("renamed"), { timeout: 15_000 });
      await sleep(300);

      // Everything presence sent it after the backlog was queued (frames arrive in the order they were sent), as the client counts it.
      const backlog = watcher.texts.findIndex((text, index) => index >= first && text.startsWith("xxxx"));
      const since = watcher.texts.slice(backlog).filter((text) => text.startsWith('{"type":"dokit_presence"'));
      const snapshots = since.filter((text) => text.startsWith(SNAPSHOT));
      const bytes = since.reduce((total, text) => total + text.length, 0);
      expect(snapshots.length).toBeGreaterThanOrEqual(1);
      expect(snapshots.length).toBeLessThanOrEqual(2);
      expect(bytes).toBeLessThanOrEqual(PRESENCE_LAG_BYTES + 2 * snapshotBytes);
      // No change was sent while it had the backlog: the first presence frame is the snapshot owed to it.
      expect(since[0]!.startsWith(SNAPSHOT)).toBe(true);
      // And what it holds is the current list: the 60 members with their last values, and itself.
      const entries = presenceOf(watcher.texts);
      expect(entries.size).toBe(61);
      expect(entries.get(publicIdOf("member-1"))).toEqual({ name: "moved-4" });
      expect(entries.get(publicIdOf("watcher"))).toEqual({ name: "watcher" });
    } finally {
      for (const socket of open) socket.destroy();
    }
  }, 90_000);
});
