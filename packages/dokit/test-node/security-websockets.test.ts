// WebSocket connection ids and the Inspector's view of them, as a real client
// meets them: Node's WebSocket over loopback to the worker started by wrangler.
// A client chooses its connection id (`_pk`); it must never act as one of the
// server's tags, and a second connection with an open one's id replaces it.
import { afterEach, describe, expect, inject, it } from "vitest";
import { WebSocket as WsSocket } from "ws";
import { evict, fresh } from "./helpers";

const base = new URL(inject("workerUrl"));
const cleanup: Array<() => void> = [];

afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

const objectPath = (name: string, kebab = "id-room") => `/agents/${kebab}/${name}`;

/** A Node WebSocket to `target` that records its text frames and its close. */
function open(target: string) {
  const url = new URL(target, base);
  url.protocol = "ws:";
  const ws = new WebSocket(url.href);
  const frames: string[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  // The frame onConnect sends after the identity frame.
  const welcome = new Promise<{ id: string; tags: string[] }>((resolve) =>
    ws.addEventListener("message", (event) => {
      const text = String(event.data);
      if (text.startsWith('{"type":"welcome"')) resolve(JSON.parse(text));
    }),
  );
  ws.addEventListener("message", (event) => frames.push(String(event.data)));
  cleanup.push(() => ws.readyState < 2 && ws.close());
  return {
    ws,
    frames,
    welcome,
    /** @returns the close, or rejects naming the readyState the socket is stuck in */
    closed: (within = 5000) =>
      Promise.race([
        closed,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no close within ${within} ms (readyState ${ws.readyState})`)), within)),
      ]),
    /** Resolves once a frame equal to `text` arrived. */
    received: (text: string, within = 5000) =>
      new Promise<void>((resolve, reject) => {
        if (frames.includes(text)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no frame ${JSON.stringify(text)} within ${within} ms; got ${JSON.stringify(frames)}`)), within);
        ws.addEventListener("message", (event) => {
          if (String(event.data) === text) (clearTimeout(timer), resolve());
        });
      }),
  };
}

async function json<T>(target: string, init?: RequestInit): Promise<T> {
  const response = await fetch(new URL(target, base), init);
  return response.json() as Promise<T>;
}

const ids = (name: string, tag?: string) => json<string[]>(`${objectPath(name)}/ids${tag === undefined ? "" : `?tag=${encodeURIComponent(tag)}`}`);
const lookup = (name: string, id: string) => json<{ id: string; tags: string[] } | null>(`${objectPath(name)}/lookup?id=${encodeURIComponent(id)}`);
async function broadcast(name: string, body: string, tag?: string): Promise<void> {
  const query = tag === undefined ? "" : `?tag=${encodeURIComponent(tag)}`;
  const response = await fetch(new URL(`${objectPath(name)}/broadcast${query}`, base), { method: "POST", body });
  expect(await response.text()).toBe("sent");
}

describe("connection ids chosen by the client", () => {
  it("a client whose id is a server tag (_pk=role:admin) is not one of that tag's connections, before and after a wake", async () => {
    const name = fresh("sec-ws-role");
    const admin = open(`${objectPath(name)}?role=admin&_pk=admin-1`);
    const attacker = open(`${objectPath(name)}?_pk=role:admin`);
    expect(await admin.welcome).toEqual({ type: "welcome", id: "admin-1", tags: ["admin-1", "role:admin"] });
    expect(await attacker.welcome).toEqual({ type: "welcome", id: "role:admin", tags: ["role:admin"] });

    for (const phase of ["awake", "after a wake"]) {
      if (phase === "after a wake") await evict(name, "evict-id-room");
      expect.soft(await ids(name, "role:admin"), phase).toEqual(["admin-1"]);
      expect((await ids(name)).sort(), phase).toEqual(["admin-1", "role:admin"]);
      // The id still finds its own connection, and only it.
      expect(await lookup(name, "role:admin"), phase).toEqual({ id: "role:admin", tags: ["role:admin"] });
      expect(await lookup(name, "admin-1"), phase).toEqual({ id: "admin-1", tags: ["admin-1", "role:admin"] });

      const secret = `admins only (${phase})`;
      await broadcast(name, secret, "role:admin");
      await broadcast(name, `everyone (${phase})`);
      await admin.received(secret);
      await attacker.received(`everyone (${phase})`);
      await admin.received(`everyone (${phase})`);
      expect.soft(attacker.frames, phase).not.toContain(secret);
    }
  });

  it.each([
    ["awake", false],
    ["after a wake", true],
  ])("a second connection with an open one's id replaces it (%s): the first client sees 4009 Connection replaced", async (_label, wake) => {
    const name = fresh("sec-ws-dup");
    // The `ws` package, which reports the close frame it received once it stops waiting for the
    // TCP shutdown (as browsers do after a few seconds): a close the object starts while it
    // answers an upgrade is never followed by one (docs/websockets.md, "Closes a real client sees").
    const url = new URL(`${objectPath(name)}?_pk=same`, base);
    url.protocol = "ws:";
    // closeTimeout (ws 8.21) is missing from @types/ws; a variable passes it without a cast.
    const options = { handshakeTimeout: 5000, closeTimeout: 500 };
    const first = new WsSocket(url.href, options);
    cleanup.push(() => first.terminate());
    const firstClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      first.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise<void>((resolve) => first.on("message", (data) => String(data).startsWith('{"type":"welcome"') && resolve()));
    if (wake) await evict(name, "evict-id-room");
    const second = open(`${objectPath(name)}?_pk=same`);
    expect((await second.welcome).id).toBe("same");

    const noClose = new Promise((resolve) => setTimeout(() => resolve(`no close within 5000 ms (readyState ${first.readyState})`), 5000));
    expect(await Promise.race([firstClosed, noClose])).toEqual({ code: 4009, reason: "Connection replaced" });
    expect(await ids(name)).toEqual(["same"]);
    await broadcast(name, "to the newer one");
    await second.received("to the newer one");
    expect(second.ws.readyState).toBe(WebSocket.OPEN);
    // The replaced connection's onClose ran once, with the code it was closed with.
    await expect.poll(() => json<string[]>(`${objectPath(name)}/closes`)).toEqual(["same:4009"]);
  });
});

describe("the Inspector's view of connection URLs", () => {
  const token = "s3cret-token-value";

  /** @returns the snapshot's text and the feed's first frame, both as the loopback page gets them */
  async function inspect(name: string, kebab: string): Promise<{ snapshot: string; feed: string }> {
    const response = await fetch(new URL(`${objectPath(name, kebab)}/__dokit/snapshot`, base));
    expect(response.status).toBe(200);
    const feed = open(`${objectPath(name, kebab)}/__dokit/feed`);
    const first = await new Promise<string>((resolve) => feed.ws.addEventListener("message", (event) => resolve(String(event.data)), { once: true }));
    return { snapshot: await response.text(), feed: first };
  }

  it("hides query values by default, in the snapshot and the feed", async () => {
    const name = fresh("sec-ws-inspect");
    const client = open(`${objectPath(name)}?_pk=viewer&token=${token}&role=admin`);
    await client.welcome;
    const { snapshot, feed } = await inspect(name, "id-room");
    for (const text of [snapshot, feed]) {
      expect(text).toContain('"id":"viewer"');
      expect(text).not.toContain(token);
    }
    const [connection] = (JSON.parse(snapshot) as { connections: Array<{ uri: string }> }).connections;
    expect(connection?.uri).toBe(`${base.origin}${objectPath(name)}?_pk=redacted&token=redacted&role=redacted`);
  });

  it("shows query values with showQueryValues", async () => {
    const name = fresh("sec-ws-inspect-shown");
    const client = open(`${objectPath(name, "id-room-queries")}?_pk=viewer&token=${token}`);
    await client.welcome;
    const { snapshot, feed } = await inspect(name, "id-room-queries");
    expect(snapshot).toContain(`token=${token}`);
    expect(feed).toContain(`token=${token}`);
  });
});
