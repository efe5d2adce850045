// Coalesced broadcasts as real clients see them: Node's WebSocket over loopback to the worker
// started by wrangler. A mover sends cursor positions; watchers get one message per tick.
import { describe, expect, it } from "vitest";
import { fresh, frameSocket, sleep } from "./helpers";

/** A watcher's received frames, collected without waiting for any one of them. */
function watcher(path: string) {
  const socket = frameSocket(path, 2000);
  const frames: string[] = [];
  socket.ws.addEventListener("message", (event) => frames.push(String(event.data)));
  return { socket, frames };
}

describe("coalesced broadcasts over loopback", () => {
  it("delivers one message per key per tick, the latest, to every other client", async () => {
    const path = `/agents/coalesce-cursors/${fresh("cursors")}`;
    const mover = frameSocket(path, 2000);
    const a = watcher(path);
    const b = watcher(path);
    await Promise.all([mover.opened, a.socket.opened, b.socket.opened]);

    // 100 broadcasts in one invocation: one message.
    mover.ws.send("burst:100");
    await sleep(600);
    expect(a.frames).toEqual(['{"x":99}']);
    expect(b.frames).toEqual(['{"x":99}']);

    // 40 frames from the client, one every 10 ms, cross several 100 ms ticks: at most one
    // message per tick, and the last position always arrives.
    a.frames.length = 0;
    b.frames.length = 0;
    const started = Date.now();
    for (let x = 0; x < 40; x++) {
      mover.ws.send(`move:${x}`);
      await sleep(10);
    }
    const ticks = Math.ceil((Date.now() - started) / 100) + 1;
    await sleep(600);
    for (const { frames } of [a, b]) {
      expect(frames.length).toBeGreaterThanOrEqual(2);
      expect(frames.length).toBeLessThanOrEqual(ticks);
      expect(frames.at(-1)).toBe('{"x":39}');
      const xs = frames.map((frame) => (JSON.parse(frame) as { x: number }).x);
      expect(xs).toEqual([...xs].sort((p, q) => p - q));
    }
    // The mover is left out by its own calls' except.
    expect(await Promise.race([mover.next(), sleep(100).then(() => "nothing")])).toBe("nothing");
  });
});
