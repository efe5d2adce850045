import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hibernate, openSocket } from "../../src/testing";
import { fresh } from "../helpers";

// SAFETY: the test worker's default export is its fetch handler.
const worker = (exports as unknown as { default: { fetch(input: Request | string, init?: RequestInit): Promise<Response> } })
  .default;
const open = (binding: string, name: string) => openSocket(worker, `http://example.com/agents/${binding}/${name}`);

describe("heartbeat", () => {
  it("answers a ping while the object is evicted, without constructing it again", async () => {
    const name = fresh("hb-evict");
    const socket = await open("ws-heartbeat", name);
    socket.send("dokit:ping");
    expect(await socket.next()).toBe("dokit:pong");
    socket.send("constructed");
    const before = Number(await socket.next());

    await hibernate(env.WS_HEARTBEAT.getByName(name));
    socket.send("dokit:ping");
    expect(await socket.next()).toBe("dokit:pong");
    socket.send("dokit:ping");
    expect(await socket.next()).toBe("dokit:pong");
    // The next real message wakes the object: exactly one more instance, none for the pings.
    socket.send("constructed");
    expect(Number(await socket.next())).toBe(before + 1);
    // A ping is never an ordinary message: nothing else came back.
    expect(await socket.drain()).toEqual([]);
    await socket.close();
  });

  it("answers custom ping strings, and the default ping is an ordinary message there", async () => {
    const name = fresh("hb-custom");
    const socket = await open("ws-heartbeat-sweep", name);
    socket.send("hb?");
    expect(await socket.next()).toBe("hb!");
    socket.send("dokit:ping");
    expect(await socket.next()).toBe("echo:dokit:ping");
    await socket.close();
  });

  it("sweeps a socket whose pings stopped (3008) and keeps one that never pinged", async () => {
    const name = fresh("hb-sweep");
    const stub = env.WS_HEARTBEAT_SWEEP.getByName(name);
    const stale = await open("ws-heartbeat-sweep", name);
    const silent = await open("ws-heartbeat-sweep", name);
    stale.send("hb?");
    expect(await stale.next()).toBe("hb!");
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).not.toBeNull();
    // The sweep runs on a 1 s grid: the stale socket is closed within about 2 s of its ping.
    const closed = await Promise.race([stale.closed, new Promise((resolve) => setTimeout(() => resolve("still open"), 4000))]);
    expect(closed).toEqual({ code: 3008, reason: "dokit: no ping within 1000 ms" });
    silent.send("here");
    expect(await silent.next()).toBe("echo:here");
    // A socket is still open: the sweep stays armed.
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).not.toBeNull();
    await silent.close();
  });
});
