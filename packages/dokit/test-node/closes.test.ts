// A connection the server closed is closed, as a client that ignores the close meets it over
// loopback: a raw client (raw-socket.ts) never answers the close frame and keeps writing, so the
// runtime keeps its socket in CLOSING and still delivers what it sends. Its messages reach no claim
// or handler (also after a wake), it is no longer counted or listed, its presence leaves at once,
// and a backlog it wrote does not hold up another client's echo. RateLimitedRoom
// (rate-limit.objects.ts): a burst of 3, then 1 a second, closed after 2 drops in a row.
import { describe, expect, inject, it } from "vitest";
import { publicIdOf } from "../test/public-id";
import { eventually, fresh, sleep } from "./helpers";
import { type RawSocket, rawSocket } from "./raw-socket";

const base = new URL(inject("workerUrl"));
type Stats = { runs: number; count: number; listed: number };

/** @returns what a new connection reads from a RateLimitedRoom: `onMessage` runs since the instance started, open connections */
async function stats(path: string): Promise<Stats> {
  const reader = await rawSocket(base, path);
  try {
    reader.send("stats");
    await eventually(() => expect(reader.texts.some((text) => text.startsWith("stats:"))).toBe(true));
    const { runs, count, listed } = JSON.parse(reader.texts.find((text) => text.startsWith("stats:"))!.slice(6)) as Stats;
    return { runs, count: count - 1, listed: listed - 1 }; // the reader itself left out
  } finally {
    reader.destroy();
  }
}

/** @returns the ids a watcher was told left, in order */
const leftOf = (watcher: RawSocket) => watcher.texts.filter((text) => text.startsWith('{"type":"dokit_presence"')).flatMap((text) => (JSON.parse(text) as { left?: string[] }).left ?? []);

describe("a connection the server closed", () => {
  it("after 4429, a client that ignores the close reaches no handler, leaves presence, and is not counted, also after a wake", async () => {
    const name = fresh("closes-4429");
    const path = `/agents/rate-limited-room/${name}`;
    const watcher = await rawSocket(base, path);
    watcher.send('{"type":"dokit_presence","watch":true}');
    const flooder = await rawSocket(base, `${path}?_pk=flooder-${name}`);
    try {
      flooder.send('{"type":"dokit_presence","value":{"name":"flooder"}}');
      await eventually(() => expect(watcher.texts.some((text) => text.includes('"name":"flooder"'))).toBe(true));
      // The presence frame, m1 and m2 are admitted; m3 and m4 dropped, and m4 closes it.
      for (let n = 1; n <= 4; n++) flooder.send(`m${n}`);
      await eventually(() => expect(flooder.closes).toEqual([4429]));
      // Its presence leaves with the close, though no close event will come.
      await eventually(() => expect(leftOf(watcher)).toEqual([publicIdOf(`flooder-${name}`)]));
      expect(await stats(path)).toEqual({ runs: 2, count: 1, listed: 1 });

      // A second later its bucket would admit a message again: it writes on, never answering the close.
      await sleep(1100);
      for (let n = 1; n <= 3; n++) flooder.send(`late${n}`);
      await sleep(300);
      expect(await stats(path)).toEqual({ runs: 2, count: 1, listed: 1 });

      // After a wake (a fresh instance, its bucket read from the attachment) the same.
      await fetch(new URL(`/evict-rate-limited/${name}`, base), { method: "POST" });
      await sleep(1100);
      for (let n = 1; n <= 3; n++) flooder.send(`woken${n}`);
      await sleep(300);
      expect(await stats(path)).toEqual({ runs: 0, count: 1, listed: 1 });
      expect(flooder.texts.filter((text) => text.startsWith("echo:"))).toEqual(["echo:m1", "echo:m2"]);
    } finally {
      flooder.destroy();
      watcher.destroy();
    }
  });

  it("after 4009, the replaced client that ignores the close reaches no handler", async () => {
    const name = fresh("closes-4009");
    const path = `/agents/rate-limited-room/${name}?_pk=shared`;
    const old = await rawSocket(base, path);
    const replacing = await rawSocket(base, path);
    try {
      await eventually(() => expect(old.closes).toEqual([4009]));
      for (let n = 1; n <= 3; n++) old.send(`old${n}`);
      replacing.send("new");
      await eventually(() => expect(replacing.texts).toContain("echo:new"));
      await sleep(300);
      expect(await stats(`/agents/rate-limited-room/${name}`)).toEqual({ runs: 1, count: 1, listed: 1 });
    } finally {
      old.destroy();
      replacing.destroy();
    }
  });

  // What remains of a backlog is the runtime's delivery of each frame (about 0.4 ms a frame under
  // wrangler dev on a shared 2-core machine, with or without dokit's drop): no code of dokit's or
  // the app's runs for it, no attachment is written, nothing is sent.
  it("a backlog written before the close reaches no handler, and another client's echo comes through", async () => {
    const name = fresh("closes-backlog");
    const path = `/agents/rate-limited-room/${name}`;
    const other = await rawSocket(base, path);
    const flooder = await rawSocket(base, path);
    try {
      const frames = 8000;
      for (let n = 0; n < frames; n++) flooder.send(`f${n}`);
      await new Promise<void>((resolve) => (flooder.socket.writableLength === 0 ? resolve() : flooder.socket.once("drain", () => resolve())));
      other.send("ping");
      await eventually(() => expect(other.texts).toContain("echo:ping"), { timeout: 15_000 });
      await eventually(() => expect(flooder.closes).toEqual([4429]));
      // The flooder's first three were handled, the other's ping; nothing of the backlog after the close.
      expect((await stats(path)).runs).toBe(4);
    } finally {
      flooder.destroy();
      other.destroy();
    }
  });
});
