// What presence queues for a watcher that does not read, over loopback: a raw client
// (raw-socket.ts) stops reading its socket and asks for a snapshot again and again (watch:false,
// watch:true). The object answers one at a time: a snapshot only once the last answer has left its
// outgoing buffer, so the buffer (`bufferedAmount`, what the object holds for it) stays within
// PRESENCE_LAG_BYTES however long it goes on; once the client reads again it gets the current list.
// PresenceClientRoom (presence-client.objects.ts): `buffered` reports each connection's buffer.
import { describe, expect, inject, it } from "vitest";
import { PRESENCE_LAG_BYTES } from "../src/presence";
import { publicIdOf } from "../test/public-id";
import { eventually, fresh, sleep } from "./helpers";
import { type RawSocket, rawSocket } from "./raw-socket";

const base = new URL(inject("workerUrl"));

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

describe("presence and a watcher that does not read", () => {
  it("re-requested snapshots wait for the last one to leave: the object's buffer for the watcher stays bounded, and it ends up with the list", async () => {
    const name = fresh("presence-lag");
    const path = `/agents/presence-client-room/${name}`;
    const open: RawSocket[] = [];
    try {
      for (let i = 0; i < 60; i++) {
        const member = await rawSocket(base, `${path}?_pk=member-${i}`);
        member.send(JSON.stringify({ type: "dokit_presence", value: { name: `${i}`.padEnd(100, ".") } }));
        open.push(member);
      }
      const watcher = await rawSocket(base, `${path}?_pk=watcher`);
      open.push(watcher);
      watcher.send('{"type":"dokit_presence","watch":true}');
      await eventually(() => expect(presenceOf(watcher.texts).size).toBe(60));
      const snapshotBytes = watcher.texts.at(-1)!.length;
      // It stops reading, and asks for the snapshot 5,000 times more (about 8 KB each: 40 MB).
      watcher.socket.pause();
      for (let i = 0; i < 5000; i++) {
        watcher.send('{"type":"dokit_presence","watch":false}');
        watcher.send('{"type":"dokit_presence","watch":true}');
      }
      const probe = await rawSocket(base, path);
      open.push(probe);
      // Once the object has taken every request (the probe's `buffered` comes after them), the watcher's buffer is read.
      await sleep(500);
      let buffered = 0;
      for (let round = 0; round < 3; round++) {
        probe.texts.length = 0;
        probe.send("buffered");
        await eventually(() => expect(probe.texts.some((text) => text.startsWith("buffered:"))).toBe(true), { timeout: 15_000 });
        const all = JSON.parse(probe.texts.find((text) => text.startsWith("buffered:"))!.slice(9)) as Record<string, number>;
        buffered = Math.max(buffered, all.watcher ?? 0);
        await sleep(300);
      }
      expect(buffered).toBeLessThanOrEqual(PRESENCE_LAG_BYTES + snapshotBytes);

      // It reads again: its last snapshot (sent once it had read the others) is the whole list.
      const member = open[0]!;
      watcher.socket.resume();
      member.send(JSON.stringify({ type: "dokit_presence", value: { name: "renamed" } }));
      await eventually(() => expect((presenceOf(watcher.texts).get(publicIdOf("member-0")) as { name: string } | undefined)?.name).toBe("renamed"), { timeout: 15_000 });
      expect(presenceOf(watcher.texts).size).toBe(60);
      const snapshots = watcher.texts.filter((text) => text.startsWith('{"type":"dokit_presence","you"')).length;
      expect(snapshots).toBeLessThan(5001);
    } finally {
      for (const socket of open) socket.destroy();
    }
  }, 60_000);
});
