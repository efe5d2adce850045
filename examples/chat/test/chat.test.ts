import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { hibernate, openSocket, type TestSocket } from "dokit/testing";
import { describe, expect, it } from "vitest";
import { fresh } from "../../test-helpers";
import type { ChatEvent } from "../src/messages";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;

/** Joins `room` on chat server `name`, reads the identity frame, and returns the socket and its welcome. */
async function join(name: string, room: string, nickname: string): Promise<{ socket: TestSocket; welcome: ChatEvent }> {
  const socket = await openSocket(worker, `http://example.com/agents/chat-room/${name}`, { query: { room, nickname } });
  expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "chat-room" });
  return { socket, welcome: await socket.nextJSON<ChatEvent>() };
}

describe("chat", () => {
  it("serves the page and its bundled script", async () => {
    const page = await worker.fetch("http://example.com/");
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain('<script type="module" src="page.js">');
    const script = await worker.fetch("http://example.com/page.js");
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await script.text()).length).toBeGreaterThan(1000);
  });

  it("welcomes a member with who is there and tells the others, not the newcomer", async () => {
    const name = fresh("welcome");
    const ada = await join(name, "general", "ada");
    expect(ada.welcome).toEqual({ type: "welcome", room: "general", nickname: "ada", members: ["ada"] });
    const bob = await join(name, "general", "bob");
    expect(bob.welcome).toEqual({ type: "welcome", room: "general", nickname: "bob", members: ["ada", "bob"] });
    expect(await ada.socket.nextJSON()).toEqual({ type: "joined", nickname: "bob" });
    expect(await bob.socket.drain()).toEqual([]);
    await bob.socket.close();
    expect(await ada.socket.nextJSON()).toEqual({ type: "left", nickname: "bob" });
    await ada.socket.close();
  });

  it("sends a line to everyone in the sender's room except the sender, and to no other room", async () => {
    const name = fresh("say");
    const ada = await join(name, "general", "ada");
    const bob = await join(name, "general", "bob");
    const eve = await join(name, "random", "eve");
    await ada.socket.nextJSON(); // bob joined
    ada.socket.send({ type: "say", text: "hello" });
    expect(await bob.socket.nextJSON()).toMatchObject({ type: "said", from: "ada", text: "hello" });
    expect(await ada.socket.drain()).toEqual([]);
    expect(await eve.socket.drain()).toEqual([]);
    await Promise.all([ada.socket.close(), bob.socket.close(), eve.socket.close()]);
  });

  it("keeps a member whose connection id looks like a room (_pk=room:random) in the room it joined", async () => {
    const name = fresh("id-room");
    const eve = await join(name, "random", "eve");
    const socket = await openSocket(worker, `http://example.com/agents/chat-room/${name}`, { query: { room: "general", nickname: "mallory", _pk: "room:random" } });
    expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity" });
    expect(await socket.nextJSON()).toMatchObject({ type: "welcome", room: "general", members: ["mallory"] });
    socket.send({ type: "say", text: "into random?" });
    socket.send({ type: "nick", nickname: "mal" });
    expect(await socket.nextJSON()).toMatchObject({ type: "renamed", from: "mallory", to: "mal" });
    expect(await eve.socket.drain()).toEqual([]);
    await Promise.all([eve.socket.close(), socket.close()]);
  });

  it("renames a member, and keeps the nickname on the connection across hibernation", async () => {
    const name = fresh("nick");
    const ada = await join(name, "general", "ada");
    const bob = await join(name, "general", "bob");
    await ada.socket.nextJSON(); // bob joined
    ada.socket.send({ type: "nick", nickname: "countess" });
    expect(await bob.socket.nextJSON()).toEqual({ type: "renamed", from: "ada", to: "countess" });
    expect(await ada.socket.nextJSON()).toEqual({ type: "renamed", from: "ada", to: "countess" });

    const stub = env.ChatRoom.get(env.ChatRoom.idFromName(name));
    await hibernate(stub);
    // A fresh instance: the nickname comes back from the socket's attachment.
    ada.socket.send({ type: "say", text: "still me" });
    expect(await bob.socket.nextJSON()).toMatchObject({ type: "said", from: "countess", text: "still me" });
    expect(await stub.members("general")).toEqual(["countess", "bob"]);
    await Promise.all([ada.socket.close(), bob.socket.close()]);
  });

  it("answers input it does not understand with an error, and keeps the connection", async () => {
    const name = fresh("bad");
    const ada = await join(name, "general", "ada");
    ada.socket.send("not json");
    expect(await ada.socket.nextJSON()).toMatchObject({ type: "error" });
    ada.socket.send({ type: "say", text: 42 });
    expect(await ada.socket.nextJSON()).toMatchObject({ type: "error" });
    ada.socket.send({ type: "say", text: "ok" });
    expect(await ada.socket.drain()).toEqual([]);
    expect(ada.socket.ws.readyState).toBe(WebSocket.OPEN);
    await ada.socket.close();
  });

  it("/remind 10 text: a durable reminder the room gets when it is due, also after hibernation", async () => {
    const name = fresh("remind");
    const ada = await join(name, "general", "ada");
    const bob = await join(name, "general", "bob");
    const eve = await join(name, "random", "eve");
    await ada.socket.nextJSON(); // bob joined
    ada.socket.send({ type: "say", text: "/remind 10 stand-up" });
    expect(await ada.socket.nextJSON()).toMatchObject({ type: "said", from: "reminders", text: "I will remind the room in 10 min: stand-up" });
    expect(await bob.socket.drain()).toEqual([]);
    const stub = env.ChatRoom.get(env.ChatRoom.idFromName(name));
    await hibernate(stub);
    // Ten minutes pass: the stored reminder is moved into the past, and the alarm re-armed through the public API.
    await runInDurableObject(stub, async (room, ctx) => {
      const [reminder] = await room.scheduler.list();
      expect(reminder).toMatchObject({ callback: "remind", type: "delayed", delayInSeconds: 600, payload: { tag: "room:general", nickname: "ada", text: "stand-up" } });
      ctx.storage.sql.exec("UPDATE dokit_schedules SET due = due - 600000");
      await room.scheduler.cancel((await room.scheduler.set(60, "remind", { tag: "", nickname: "", text: "" })).id);
    });
    await runDurableObjectAlarm(stub);
    expect(await bob.socket.nextJSON()).toMatchObject({ type: "said", from: "reminder", text: "@ada: stand-up" });
    expect(await ada.socket.nextJSON()).toMatchObject({ type: "said", from: "reminder", text: "@ada: stand-up" });
    expect(await eve.socket.drain()).toEqual([]);
    ada.socket.send({ type: "say", text: "/remind 100000 too late" });
    expect(await ada.socket.nextJSON()).toEqual({ type: "error", message: "Reminders are 0 to 1440 minutes ahead" });
    await Promise.all([ada.socket.close(), bob.socket.close(), eve.socket.close()]);
  });
});
