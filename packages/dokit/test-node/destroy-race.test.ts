// Connections that arrive while an object is being destroyed, as clients reconnecting at once meet
// them over loopback: destroy() closes every connection with 1001 and resets the instance shortly
// after. A connection accepted in between would open and then be cut by the reset (1006), and what
// it sent first be lost with the instance; instead it is refused with 1012, which clients follow by
// reconnecting, and they reach the fresh instance. (A connect attempt made while the instance
// resets may fail outright, a 1006 without an open, which clients retry as well.) PlainRoom (connect.objects.ts): `/destroy`, `/sockets`,
// `close <code>` (the object closes the sender).
import { describe, expect, inject, it, onTestFinished } from "vitest";
import { AgentClient } from "../src/client";
import { eventually, fresh, sleep } from "./helpers";

const base = new URL(inject("workerUrl"));

describe("destroy() and clients that connect meanwhile", () => {
  it("refuses them with 1012 until the reset, then they reach the fresh instance: open, listed, served, round after round", async () => {
    const name = fresh("destroy-race");
    const objectUrl = (rest: string) => new URL(`/agents/plain-room/${name}${rest}`, base);
    const sockets = async () => (await (await fetch(objectUrl("/sockets"))).json()) as { connections: number; sockets: number };
    const closes: number[] = [];
    /** Closes that ended a socket which had opened: the code, per client. */
    const afterOpen: number[] = [];
    const clients: AgentClient[] = [];
    /** Attempts that never opened (one made during the reset itself): reported, and retried. */
    const failedAttempts: string[] = [];
    const join = () => {
      const client = new AgentClient({
        agent: "PlainRoom", name, host: base.host, minReconnectionDelay: 1, maxReconnectionDelay: 20, reconnectionDelayGrowFactor: 1.5,
        onConnectFailure: (error) => failedAttempts.push(error.message),
      });
      onTestFinished(() => client.close());
      let open = false;
      client.addEventListener("open", () => (open = true));
      client.addEventListener("close", (event) => {
        const code = (event as CloseEvent).code;
        closes.push(code);
        if (open) afterOpen.push(code);
        open = false;
      });
      clients.push(client);
    };
    join();
    await eventually(() => expect(clients[0]!.readyState).toBe(WebSocket.OPEN));
    for (let round = 1; round <= 4; round++) {
      const destroyed = fetch(objectUrl("/destroy")).then((response) => response.text());
      // New clients while the destroy runs and until shortly after its reset.
      for (let i = 0; i < 8; i++) {
        join();
        await sleep(20);
      }
      expect(await destroyed).toBe("destroyed");
      await eventually(() => expect(clients.every((client) => client.readyState === WebSocket.OPEN)).toBe(true), { timeout: 10_000 });
      await eventually(async () => expect(await sockets(), `round ${round}`).toEqual({ connections: clients.length, sockets: clients.length }), { timeout: 5000 });
    }
    // No socket that opened was cut by a reset: each is closed by the destroy (1001) or refused (1012).
    expect(afterOpen.filter((code) => code !== 1001 && code !== 1012)).toEqual([]);
    expect(closes).toContain(1012);
    for (const message of failedAttempts) expect(message).toMatch(/^dokit: could not connect to /);
    // The sockets they ended on are served: the object closes one on request.
    const last = clients.at(-1)!;
    const closed = new Promise<number>((resolve) => last.addEventListener("close", (event) => resolve((event as CloseEvent).code), { once: true }));
    last.send("close 4002");
    expect(await closed).toBe(4002);
  });
});
