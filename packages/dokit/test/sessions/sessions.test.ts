import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type SessionMessage, type SessionChangeEvent, createCompactFunction, isCompactionMessage } from "../../src/sessions";
import { subscribe } from "../../src/observability";
import { hibernate } from "../../src/testing";
import { fresh } from "../helpers";
import { captureConsole } from "../logs";
import type { Conversation } from "./objects";

const conversation = (name = fresh("conversation")) => env.CONVERSATION.get(env.CONVERSATION.idFromName(name));
type Stub = ReturnType<typeof conversation>;
const run = <T>(stub: Stub, fn: (object: Conversation, ctx: DurableObjectState) => Promise<T> | T) => runInDurableObject(stub, fn);

const text = (id: string, body: string, role = "user"): SessionMessage => ({ id, role, parts: [{ type: "text", text: body }] });
const ids = (messages: SessionMessage[]) => messages.map((message) => message.id);

/** Sums the rows written (or read) by every SQL statement `fn` runs on this object. */
async function rowsWritten(ctx: DurableObjectState, fn: () => Promise<unknown>, count: "rowsWritten" | "rowsRead" = "rowsWritten"): Promise<number> {
  const sql = ctx.storage.sql;
  const exec = sql.exec;
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec.call(sql, query, ...bindings);
    cursors.push(cursor);
    return cursor;
  }) as typeof sql.exec;
  try {
    await fn();
  } finally {
    sql.exec = exec;
  }
  return cursors.reduce((sum, cursor) => sum + cursor[count], 0);
}

const table = (ctx: DurableObjectState, query: string) => ctx.storage.sql.exec(query).toArray();

describe("writes", () => {
  it("appends after the active leaf, as a root with parentId null, and as a branch with a parent id", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      const first = await session.appendMessage(text("u1", "hello"));
      expect(first).toEqual({ inserted: true, message: text("u1", "hello") });
      await session.appendMessage(text("a1", "hi", "assistant"));
      await session.appendMessage(text("a2", "hey", "assistant"), { parentId: "u1" });
      expect(ids(await session.getHistory())).toEqual(["u1", "a2"]);
      expect(ids(await session.getHistory({ leafId: "a1" }))).toEqual(["u1", "a1"]);
      expect(ids(await session.getBranches("u1"))).toEqual(["a1", "a2"]);
      expect((await session.getLatestLeaf())?.id).toBe("a2");
      await session.appendMessage(text("r2", "new root"), { parentId: null });
      expect(ids(await session.getHistory())).toEqual(["r2"]);
      // A parent that is not in the session makes a root.
      await session.appendMessage(text("orphan", "x"), { parentId: "nope" });
      expect(ids(await session.getHistory())).toEqual(["orphan"]);
    });
  });

  it("a repeated id writes nothing and returns the stored row; an overlay id is never stored", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }, ctx) => {
      await session.appendMessage(text("m", "original"));
      const again = await session.appendMessage(text("m", "changed"));
      expect(again).toEqual({ inserted: false, message: text("m", "original") });
      expect(events.at(-1)).toMatchObject({ type: "append", inserted: false });
      const before = events.length;
      const overlay = await session.appendMessage(text("compaction_x", "summary"));
      expect(overlay.inserted).toBe(false);
      expect(await session.getMessage("compaction_x")).toBeNull();
      expect(events.length).toBe(before);
      expect(table(ctx, "SELECT id FROM dokit_session_messages").map((row) => row.id)).toEqual(["m"]);
    });
  });

  it("updateMessage rewrites a stored row, returns null for an absent one, and writes nothing for an unchanged one", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }, ctx) => {
      await session.appendMessage(text("m", "v1"));
      expect(await session.updateMessage(text("m", "v2"))).toEqual(text("m", "v2"));
      expect(await session.getMessage("m")).toEqual(text("m", "v2"));
      expect(await session.updateMessage(text("absent", "x"))).toBeNull();
      const count = events.length;
      expect(await rowsWritten(ctx, () => session.updateMessage(text("m", "v2")))).toBe(0);
      expect(events.length).toBe(count);
      const upserted = await session.upsertMessage(text("m", "v3"));
      expect(upserted.inserted).toBe(false);
      const fresh2 = await session.upsertMessage(text("n", "new"));
      expect(fresh2.inserted).toBe(true);
      expect(ids(await session.getHistory())).toEqual(["m", "n"]);
      expect(events.map((event) => event.type)).toEqual(["append", "update", "update", "append"]);
    });
  });

  it("deleting a message in the middle of a chain splices its children to its parent", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }) => {
      for (const id of ["a", "b", "c", "d", "e"]) await session.appendMessage(text(id, id));
      await session.deleteMessages(["b", "c"]);
      expect(ids(await session.getHistory())).toEqual(["a", "d", "e"]);
      await session.deleteMessages(["e"]);
      expect((await session.getLatestLeaf())?.id).toBe("d");
      await session.deleteMessages(["a"]);
      expect(ids(await session.getHistory())).toEqual(["d"]);
      await session.deleteMessages(["never-stored"]);
      expect(events.filter((event) => event.type === "delete")).toEqual([
        { type: "delete", sessionId: "", messageIds: ["b", "c"] },
        { type: "delete", sessionId: "", messageIds: ["e"] },
        { type: "delete", sessionId: "", messageIds: ["a"] },
      ]);
    });
  });

  it("clearMessages empties one session and leaves the others", async () => {
    const stub = conversation();
    await run(stub, async ({ sessions }) => {
      const one = sessions.session("one");
      const two = sessions.session("two");
      await one.appendMessage(text("x", "one"));
      await two.appendMessage(text("x", "two"));
      await one.addCompaction("s", "x", "x");
      await one.clearMessages();
      expect(await one.getHistory()).toEqual([]);
      expect(await one.getCompactions()).toEqual([]);
      expect(await two.getHistory()).toEqual([text("x", "two")]);
      expect(sessions.session("one")).toBe(one);
    });
  });

  it("source client strips reserved metadata; a server write keeps it", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      const metadata = { channel: "sms", turnMetadata: { a: 1 }, note: "kept" };
      const client = await session.appendMessage({ ...text("c", "hi"), metadata }, { source: "client" });
      expect(client.message.metadata).toEqual({ note: "kept" });
      expect((await session.getMessage("c"))?.metadata).toEqual({ note: "kept" });
      await session.appendMessage({ ...text("s", "hi"), metadata });
      expect((await session.getMessage("s"))?.metadata).toEqual(metadata);
    });
  });

  it("a client message over maxClientMessageBytes is refused with MESSAGE_TOO_LARGE and nothing is stored; a server one of the same size is stored", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }, ctx) => {
      const big = text("big", "x".repeat(70 * 1024));
      await expect(session.appendMessage(big, { source: "client" })).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
      await expect(session.appendMessage(big, { source: "client" })).rejects.toThrow(/^dokit: a client message of \d+ bytes is over/);
      expect(table(ctx, "SELECT name FROM sqlite_master WHERE name LIKE 'dokit_session%'")).toEqual([]);
      expect(events).toEqual([]);
      await session.appendMessage(text("small", "ok"));
      await expect(session.updateMessage(text("small", "y".repeat(70 * 1024)), { source: "client" })).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
      expect(await session.getMessage("small")).toEqual(text("small", "ok"));
      expect((await session.appendMessage(big)).inserted).toBe(true);
    });
  });

  it("refuses a malformed message with INVALID_MESSAGE and a message that is not JSON with JSON.stringify's TypeError", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      await expect(session.appendMessage({ id: "", role: "user", parts: [] })).rejects.toMatchObject({ code: "INVALID_MESSAGE" });
      // SAFETY: deliberately malformed input.
      await expect(session.appendMessage({ id: "x", role: "user" } as unknown as SessionMessage)).rejects.toMatchObject({ code: "INVALID_MESSAGE" });
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(session.appendMessage({ id: "x", role: "user", parts: [], metadata: cyclic })).rejects.toThrow(TypeError);
      expect(await session.getHistory()).toEqual([]);
    });
  });

  it("strips OpenAI item ids and encrypted reasoning from provider metadata and drops empty reasoning parts", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      const message = {
        id: "p",
        role: "assistant",
        parts: [
          { type: "reasoning", text: "" },
          { type: "text", text: "hi", providerMetadata: { openai: { itemId: "i1", other: 1 }, anthropic: { a: 1 } } },
          { type: "text", text: "ho", providerMetadata: { openai: { itemId: "i2" } } },
        ],
      };
      const { message: stored } = await session.appendMessage(message);
      expect(stored.parts).toEqual([
        { type: "text", text: "hi", providerMetadata: { anthropic: { a: 1 }, openai: { other: 1 } } },
        { type: "text", text: "ho" },
      ]);
      expect(await session.getMessage("p")).toEqual(stored);
    });
  });

  it("a text append writes exactly one row; a 2 MB message two; a 200 KB image three, a 2 MiB image four, a stored image again two", async () => {
    const stub = conversation();
    await run(stub, async ({ session }, ctx) => {
      await session.appendMessage(text("warm", "first"));
      expect(await rowsWritten(ctx, () => session.appendMessage(text("one", "a short message")))).toBe(1);
      expect(await rowsWritten(ctx, () => session.appendMessage(text("two", "z".repeat(2_000_000))))).toBe(2);
      // An image: the message, its payload's parts (1.5 MiB each, of the data: url), one reference.
      const image = (id: string, base64Length: number): SessionMessage => ({
        id,
        role: "user",
        parts: [{ type: "file", mediaType: "image/png", url: `data:image/png;base64,${(id + "A".repeat(base64Length)).slice(0, base64Length)}` }],
      });
      expect(await rowsWritten(ctx, () => session.appendMessage(image("i200k", Math.ceil((200 * 1024) / 3) * 4)))).toBe(3);
      expect(await rowsWritten(ctx, () => session.appendMessage(image("i2m", Math.ceil((2 * 1024 * 1024) / 3) * 4)))).toBe(4);
      // The same payload again: the message and a reference.
      expect(await rowsWritten(ctx, () => session.appendMessage({ ...image("i200k", Math.ceil((200 * 1024) / 3) * 4), id: "again" }))).toBe(2);
    });
  });

  it("importMessage writes a row verbatim with its parent and time, dispatches import, and skips a stored id", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }) => {
      await session.importMessage(text("i1", "old"), { parentId: null, createdAt: 1000 });
      await session.importMessage(text("i2", "older reply", "assistant"), { parentId: "i1", createdAt: 2000 });
      await session.importMessage(text("i2", "again"), { parentId: "i1", createdAt: 3000 });
      expect(await session.getHistory()).toEqual([text("i1", "old"), text("i2", "older reply", "assistant")]);
      expect(events.map((event) => [event.type, "parentId" in event ? event.parentId : undefined])).toEqual([
        ["import", null],
        ["import", "i1"],
      ]);
      const found = await session.search("older");
      expect(found[0]?.createdAt).toBe(new Date(2000).toISOString());
    });
  });
});

describe("large messages and media", () => {
  it("a 5 MB message is split across rows and reads back byte for byte", async () => {
    const stub = conversation();
    const body = Array.from({ length: 5 * 1024 }, (_, i) => `${i.toString(36)}:${"lorem ipsum ".repeat(85)}`).join("\n");
    expect(body.length).toBeGreaterThan(5_000_000);
    const message = text("huge", body, "assistant");
    await run(stub, async ({ session }, ctx) => {
      await session.appendMessage(message);
      const row = table(ctx, "SELECT slices, length(CAST(content AS BLOB)) AS first FROM dokit_session_messages WHERE id = 'huge'")[0];
      expect(row?.slices).toBe(3);
      expect(Number(row?.first)).toBeLessThanOrEqual(1536 * 1024);
    });
    await hibernate(stub);
    await run(stub, async ({ session }) => {
      const read = await session.getMessage("huge");
      expect(JSON.stringify(read)).toBe(JSON.stringify(message));
      const [stat] = await session.getHistoryRowStats();
      expect(stat?.bytes).toBe(new TextEncoder().encode(JSON.stringify(message)).byteLength);
    });
  });

  it("a message of emoji and CJK text, cut at every slice boundary, reads back byte for byte", async () => {
    const stub = conversation();
    // 4-byte emoji (surrogate pairs) and 3-byte CJK, offset so slice edges fall inside characters.
    const body = `a${"😀漢字🀄️👩‍👩‍👧‍👦".repeat(200_000)}`;
    const message: SessionMessage = { id: "emoji", role: "user", parts: [{ type: "text", text: body }], metadata: { note: "📎" } };
    await run(stub, async ({ session }, ctx) => {
      await session.appendMessage(message);
      const row = table(ctx, "SELECT slices FROM dokit_session_messages WHERE id = 'emoji'")[0];
      expect(Number(row?.slices)).toBeGreaterThan(1);
      for (const slice of table(ctx, "SELECT length(CAST(data AS BLOB)) AS bytes FROM dokit_session_slices WHERE id = 'emoji'")) {
        expect(Number(slice.bytes)).toBeLessThanOrEqual(1536 * 1024);
      }
    });
    await hibernate(stub);
    await run(stub, async ({ session }) => {
      const read = await session.getMessage("emoji");
      expect(read?.parts[0]?.text === body).toBe(true);
      expect(JSON.stringify(read)).toBe(JSON.stringify(message));
    });
  });

  it("an updated large message replaces its slices; a shorter update leaves none behind", async () => {
    const stub = conversation();
    await run(stub, async ({ session }, ctx) => {
      await session.appendMessage(text("grow", "g".repeat(4_000_000)));
      await session.updateMessage(text("grow", "short"));
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_slices")[0]?.n).toBe(0);
      expect(await session.getMessage("grow")).toEqual(text("grow", "short"));
    });
  });

  it("a 2 MB image is stored once for two messages, restored on read, and freed with the last message that points at it", async () => {
    const stub = conversation();
    const bytes = new Uint8Array(2 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 251;
    let binary = "";
    for (let i = 0; i < bytes.length; i += 8192) binary += String.fromCharCode(...bytes.subarray(i, i + 8192));
    const url = `data:image/png;base64,${btoa(binary)}`;
    const withImage = (id: string): SessionMessage => ({
      id,
      role: "user",
      parts: [
        { type: "text", text: "look" },
        { type: "file", mediaType: "image/png", filename: "x.png", url },
      ],
    });
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(url)))].map((b) => b.toString(16).padStart(2, "0")).join("");
    await run(stub, async ({ session }, ctx) => {
      await session.appendMessage(withImage("one"));
      await session.appendMessage(withImage("two"));
      const media = table(ctx, "SELECT hash, count(*) AS parts, sum(length(data)) AS bytes FROM dokit_session_media GROUP BY hash");
      expect(media).toEqual([{ hash: digest, parts: 2, bytes: url.length }]);
      const row = table(ctx, "SELECT content FROM dokit_session_messages WHERE id = 'one'")[0];
      expect(String(row?.content).length).toBeLessThan(300);
      expect(String(row?.content)).toContain(`attachment:sha256:${digest}`);
    });
    await hibernate(stub);
    await run(stub, async ({ session }, ctx) => {
      expect(JSON.stringify(await session.getMessage("two"))).toBe(JSON.stringify(withImage("two")));
      const [first] = await session.getHistoryRowStats();
      expect(first?.bytes).toBeGreaterThan(url.length);
      await session.deleteMessages(["one"]);
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_media")[0]?.n).toBe(2);
      expect(JSON.stringify(await session.getMessage("two"))).toBe(JSON.stringify(withImage("two")));
      await session.deleteMessages(["two"]);
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_media")[0]?.n).toBe(0);
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_media_refs")[0]?.n).toBe(0);
    });
  });

  it("an update that drops an image frees it; clear frees every payload of the session only", async () => {
    const stub = conversation();
    const image = (id: string, seed: string): SessionMessage => ({ id, role: "user", parts: [{ type: "file", mediaType: "image/jpeg", url: `data:image/jpeg;base64,${seed}` }] });
    await run(stub, async ({ sessions }, ctx) => {
      const a = sessions.session("a");
      const b = sessions.session("b");
      await a.appendMessage(image("m", "AAAA"));
      await a.updateMessage(text("m", "no image now"));
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_media")[0]?.n).toBe(0);
      await a.appendMessage(image("p", "BBBB"));
      await b.appendMessage(image("q", "BBBB"));
      await a.appendMessage(image("r", "CCCC"));
      await a.clearMessages();
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_media")[0]?.n).toBe(1);
      expect(await b.getMessage("q")).toEqual(image("q", "BBBB"));
      // A text/* file and a remote url stay inline.
      const inline: SessionMessage = {
        id: "t",
        role: "user",
        parts: [
          { type: "file", mediaType: "text/plain", url: "data:text/plain;base64,aGk=" },
          { type: "file", mediaType: "image/png", url: "https://example.com/x.png" },
        ],
      };
      await b.appendMessage(inline);
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_media")[0]?.n).toBe(1);
      expect(await b.getMessage("t")).toEqual(inline);
    });
  });
});

describe("reads", () => {
  it("history streams root → leaf and leaf → root; historyBatches bounds count and bytes; getRecentHistory bounds bytes", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      for (let i = 0; i < 120; i++) await session.appendMessage(text(`m${i}`, `message ${i}`, i % 2 ? "assistant" : "user"));
      const forward: string[] = [];
      for await (const message of session.history()) forward.push(message.id);
      expect(forward).toEqual(Array.from({ length: 120 }, (_, i) => `m${i}`));
      const backward: string[] = [];
      for await (const message of session.history({ newestFirst: true })) {
        backward.push(message.id);
        if (backward.length === 3) break;
      }
      expect(backward).toEqual(["m119", "m118", "m117"]);
      const everyOne: string[] = [];
      for await (const message of session.history({ newestFirst: true })) everyOne.push(message.id);
      expect(everyOne).toEqual(Array.from({ length: 120 }, (_, i) => `m${119 - i}`));
      const sizes: number[] = [];
      for await (const batch of session.historyBatches({ batchSize: 25 })) sizes.push(batch.length);
      expect(sizes).toEqual([25, 25, 25, 25, 20]);
      const small: number[] = [];
      for await (const batch of session.historyBatches({ maxBatchBytes: 200 })) small.push(batch.length);
      expect(Math.max(...small)).toBeLessThanOrEqual(3);
      expect(small.reduce((a, b) => a + b, 0)).toBe(120);
      const stats = await session.getHistoryRowStats();
      expect(stats).toHaveLength(120);
      expect(stats[0]).toEqual({ id: "m0", role: "user", bytes: JSON.stringify(text("m0", "message 0")).length, tokenEstimate: expect.any(Number) });
      const budget = stats.slice(-10).reduce((sum, stat) => sum + stat.bytes, 0);
      const recent = await session.getRecentHistory(budget);
      expect(ids(recent.messages)).toEqual(Array.from({ length: 10 }, (_, i) => `m${110 + i}`));
      expect(recent.truncated).toBe(true);
      expect(recent.totalContentBytes).toBe(stats.reduce((sum, stat) => sum + stat.bytes, 0));
      const tiny = await session.getRecentHistory(1);
      expect(ids(tiny.messages)).toEqual(["m119"]);
      const all = await session.getRecentHistory(10_000_000);
      expect(all.truncated).toBe(false);
      expect(all.messages).toHaveLength(120);
    });
  });

  it("a newest-first read that stops early reads none of the older rows", async () => {
    const stub = conversation();
    await run(stub, async ({ session }, ctx) => {
      for (let i = 0; i < 500; i++) await session.appendMessage(text(`m${i}`, `message ${i}`));
      const read = await rowsWritten(
        ctx,
        async () => {
          for await (const message of session.history({ newestFirst: true })) {
            expect(message.id).toBe("m499");
            break;
          }
        },
        "rowsRead",
      );
      // One step of eight ids and their content: never the 500.
      expect(read).toBeLessThan(40);
      const whole = await rowsWritten(ctx, () => session.getHistory(), "rowsRead");
      expect(whole).toBeGreaterThan(500);
    });
  });

  it("an aborted signal stops a streamed read", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      await session.appendMessage(text("a", "a"));
      const controller = new AbortController();
      controller.abort(new Error("stop"));
      await expect(session.getHistory({ signal: controller.signal })).rejects.toThrow("stop");
    });
  });

  it("survives eviction between every write: the leaf, branches and content come from storage", async () => {
    const stub = conversation();
    const steps: ((object: Conversation) => Promise<unknown>)[] = [
      ({ session }) => session.appendMessage(text("u1", "question")),
      ({ session }) => session.appendMessage(text("a1", "answer", "assistant")),
      ({ session }) => session.appendMessage(text("a1b", "other answer", "assistant"), { parentId: "u1" }),
      ({ session }) => session.appendMessage(text("u2", "follow-up")),
      ({ session }) => session.updateMessage(text("u2", "follow-up, edited")),
      ({ session }) => session.appendMessage(text("big", "b".repeat(3_000_000), "assistant")),
      ({ session }) => session.deleteMessages(["u2"]),
      ({ session }) => session.addCompaction("summary", "u1", "a1b"),
      ({ session }) => session.appendMessage(text("u3", "last")),
    ];
    for (const step of steps) {
      await run(stub, step);
      await hibernate(stub);
    }
    await run(stub, async ({ session }) => {
      const history = await session.getHistory();
      expect(history.map((message) => (isCompactionMessage(message) ? "overlay" : message.id))).toEqual(["overlay", "big", "u3"]);
      expect(ids(await session.getHistory({ leafId: "a1" }))).toEqual(["u1", "a1"]);
      expect((await session.getMessage("big"))?.parts[0]?.text?.length).toBe(3_000_000);
      expect((await session.getLatestLeaf())?.id).toBe("u3");
    });
  });
});

describe("compaction", () => {
  it("an overlay replaces its span on reads, keeps every row, and can be read around with a branch", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }, ctx) => {
      for (const id of ["a", "b", "c", "d", "e"]) await session.appendMessage(text(id, `text ${id}`));
      await session.appendMessage(text("x", "branch"), { parentId: "b" });
      const stored = await session.addCompaction("b to d, summarized", "b", "d");
      expect(events.at(-1)).toEqual({ type: "compaction", sessionId: "", compaction: stored });
      const main = await session.getHistory({ leafId: "e" });
      expect(main.map((message) => message.id)).toEqual(["a", `compaction_${stored.id}`, "e"]);
      expect(main[1]).toEqual({ id: `compaction_${stored.id}`, role: "assistant", parts: [{ type: "text", text: "b to d, summarized" }], createdAt: new Date(stored.createdAt) });
      // The branch leaves the span before its end: the overlay does not apply to it.
      expect(ids(await session.getHistory({ leafId: "x" }))).toEqual(["a", "b", "x"]);
      expect(table(ctx, "SELECT count(*) AS n FROM dokit_session_messages")[0]?.n).toBe(6);
      const newest: string[] = [];
      for await (const message of session.history({ leafId: "e", newestFirst: true })) newest.push(isCompactionMessage(message) ? "overlay" : message.id);
      expect(newest).toEqual(["e", "overlay", "a"]);
      // Deleting a message inside the span keeps the overlay over what is left of it.
      await session.deleteMessages(["c"]);
      expect((await session.getHistory({ leafId: "e" })).map((message) => (isCompactionMessage(message) ? "overlay" : message.id))).toEqual(["a", "overlay", "e"]);
      // An overlay whose anchor is deleted no longer applies.
      await session.deleteMessages(["d"]);
      expect(ids(await session.getHistory({ leafId: "e" }))).toEqual(["a", "b", "e"]);
    });
  });

  it("overlays on a path longer than a read window apply the same in every read: forward, newest first, batches, the recent window and the token estimate", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      for (let i = 0; i < 120; i++) await session.appendMessage(text(`m${i}`, `message ${i}`, i % 2 ? "assistant" : "user"));
      // One span across the first window's edge (a window holds 50 messages), one near the leaf.
      // The early summary is larger than the batch budget below, the late one smaller than a row.
      const earlySummary = "forty to sixty, ".repeat(100);
      const lateSummary = "a hundred to a hundred and five";
      const early = await session.addCompaction(earlySummary, "m40", "m60");
      const late = await session.addCompaction(lateSummary, "m100", "m105");
      const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `m${from + i}`);
      const expected = [...range(0, 39), `compaction_${early.id}`, ...range(61, 99), `compaction_${late.id}`, ...range(106, 119)];
      const forward: string[] = [];
      for await (const message of session.history()) forward.push(message.id);
      expect(forward).toEqual(expected);
      const backward: string[] = [];
      for await (const message of session.history({ newestFirst: true })) backward.push(message.id);
      expect(backward).toEqual(expected.slice().reverse());
      const batches: string[][] = [];
      for await (const batch of session.historyBatches({ batchSize: 50 })) batches.push(ids(batch));
      expect(batches.map((batch) => batch.length)).toEqual([50, 45]);
      expect(batches.flat()).toEqual(expected);
      // A byte budget counts an overlay as its summary's length.
      const stats = await session.getHistoryRowStats();
      const byId = new Map(stats.map((stat) => [stat.id, stat]));
      const rowBytes = (id: string) => byId.get(id)?.bytes ?? 0;
      const summaries = new Map([
        [`compaction_${early.id}`, earlySummary.length],
        [`compaction_${late.id}`, lateSummary.length],
      ]);
      const size = (id: string) => summaries.get(id) ?? rowBytes(id);
      const budget = 1000;
      const tight: string[][] = [];
      for await (const batch of session.historyBatches({ maxBatchBytes: budget })) tight.push(ids(batch));
      expect(tight.flat()).toEqual(expected);
      const total = (batch: string[]) => batch.reduce((sum, id) => sum + size(id), 0);
      // Each batch is as full as the budget lets it be: within it, and over it with the next message.
      expect(tight).toContainEqual([`compaction_${early.id}`]);
      tight.forEach((batch, at) => {
        if (batch.length > 1) expect(total(batch)).toBeLessThanOrEqual(budget);
        const next = tight[at + 1];
        if (next) expect(total(batch) + size(next[0] as string)).toBeGreaterThan(budget);
      });
      // The recent window plans overlays over itself: one whose first message is outside it is not shown.
      const lastRows = range(103, 119);
      const recent = await session.getRecentHistory(lastRows.reduce((sum, id) => sum + rowBytes(id), 0));
      expect(ids(recent.messages)).toEqual(lastRows);
      expect(recent.truncated).toBe(true);
      expect(recent.totalContentBytes).toBe(stats.reduce((sum, stat) => sum + stat.bytes, 0));
      const everything = await session.getRecentHistory(10_000_000);
      expect(ids(everything.messages)).toEqual(expected);
      expect(everything.truncated).toBe(false);
      const covered = new Set([...range(40, 60), ...range(100, 105)]);
      const rowTokens = stats.filter((stat) => !covered.has(stat.id)).reduce((sum, stat) => sum + stat.tokenEstimate, 0);
      const summaryTokens = Math.ceil(earlySummary.length / 4) + 4 + Math.ceil(lateSummary.length / 4) + 4;
      expect(session.tokenEstimate()).toBe(rowTokens + summaryTokens);
      // A branch leaving before the late span's end reads the early overlay only.
      await session.appendMessage(text("fork", "a branch"), { parentId: "m102" });
      expect(ids(await session.getHistory({ leafId: "fork" }))).toEqual([...range(0, 39), `compaction_${early.id}`, ...range(61, 102), "fork"]);
    });
  });

  it("createCompactFunction keeps the head and the recent tail, summarizes the middle, and folds an earlier summary in", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      const prompts: string[] = [];
      session.onCompaction(
        createCompactFunction({
          summarize: async (prompt) => {
            prompts.push(prompt);
            return `summary ${prompts.length}`;
          },
          keepRecentTokens: 30,
        }),
      );
      for (let i = 0; i < 12; i++) await session.appendMessage(text(`m${i}`, `message number ${i} `.repeat(4)));
      const first = await session.compact();
      expect(first?.fromMessageId).toBe("m3");
      expect(first?.summary).toBe("summary 1");
      expect(prompts[0]).toContain("message number 3");
      expect(prompts[0]).not.toContain("message number 0");
      expect(prompts[0]).not.toContain("message number 11");
      const shown = await session.getHistory();
      expect(shown.slice(0, 3).map((message) => message.id)).toEqual(["m0", "m1", "m2"]);
      expect(isCompactionMessage(shown[3] as SessionMessage)).toBe(true);
      for (let i = 12; i < 20; i++) await session.appendMessage(text(`m${i}`, `message number ${i} `.repeat(4)));
      const second = await session.compact();
      expect(prompts[1]).toContain("summary 1");
      expect(second).not.toBeNull();
      const after = await session.getHistory();
      expect(after.filter(isCompactionMessage)).toHaveLength(1);
      expect(after.find(isCompactionMessage)?.parts[0]?.text).toBe("summary 2");
      expect(after.slice(0, 3).map((message) => message.id)).toEqual(["m0", "m1", "m2"]);
      expect(after.at(-1)?.id).toBe("m19");
    });
  });

  it("compactAfter compacts once the estimate passes the threshold; a failing summarizer is logged and the transcript stays", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }) => {
      let calls = 0;
      session.onCompaction(createCompactFunction({ summarize: async () => `s${++calls}`, keepRecentTokens: 10 })).compactAfter(200);
      for (let i = 0; i < 8; i++) await session.appendMessage(text(`m${i}`, "w".repeat(200)));
      expect(calls).toBeGreaterThan(0);
      expect(events.some((event) => event.type === "compact")).toBe(true);
      expect(session.tokenEstimate()).toBeLessThan(8 * 54);
    });
    const other = conversation();
    await run(other, async ({ session }) => {
      const logs = captureConsole();
      session.onCompaction(async () => {
        throw new Error("model down");
      });
      await session.appendMessage(text("a", "a"));
      expect(await session.compact()).toBeNull();
      expect(logs.error).toEqual(["dokit: Sessions compaction failed: model down"]);
      expect(ids(await session.getHistory())).toEqual(["a"]);
      const bare = (await import("./objects")).Conversation;
      void bare;
      await expect(session.onCompaction(undefined as never).compact()).rejects.toMatchObject({ code: "NO_COMPACTION" });
    });
  });

  it("a failure is published as session:error through an installed Observability", async () => {
    const stub = env.OBSERVED.get(env.OBSERVED.idFromName(fresh("observed")));
    const seen: { type: string; payload: unknown }[] = [];
    const stop = subscribe("lifecycle", (event) => {
      if (event.type === "session:error") seen.push({ type: event.type, payload: event.payload });
    });
    try {
      await runInDurableObject(stub, async ({ session }) => {
        const logs = captureConsole();
        session.onCompaction(async () => {
          throw new Error("model down");
        });
        await session.appendMessage(text("a", "a"));
        expect(await session.compact()).toBeNull();
        expect(logs.error).toEqual(["dokit: Sessions compaction failed: model down"]);
      });
    } finally {
      stop();
    }
    expect(seen).toEqual([{ type: "session:error", payload: { where: "Sessions compaction", code: "INTERNAL", message: "model down" } }]);
  });

  it("compact(leafId) summarizes that branch", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      const seen: string[][] = [];
      session.onCompaction(async (messages) => {
        seen.push(ids(messages));
        return null;
      });
      await session.appendMessage(text("a", "a"));
      await session.appendMessage(text("b", "b"));
      await session.appendMessage(text("c", "c"), { parentId: "a" });
      await session.compact("b");
      await session.compact();
      expect(seen).toEqual([
        ["a", "b"],
        ["a", "c"],
      ]);
    });
  });
});

describe("search", () => {
  it("is built by the first search, finds text written before and after, and forgets deleted and updated text", async () => {
    const stub = conversation();
    await run(stub, async ({ sessions, session }, ctx) => {
      await session.appendMessage(text("a", "the deployment failed at noon"));
      await session.appendMessage(text("b", "w".repeat(2_000_000) + " deployment failed in a long one"));
      await sessions.session("other").appendMessage(text("o", "deployment failed elsewhere"));
      const indexTable = () => table(ctx, "SELECT name FROM sqlite_master WHERE name = 'dokit_session_fts'").length;
      expect(indexTable()).toBe(0);
      // One billed row per text append before any search.
      expect(await rowsWritten(ctx, () => session.appendMessage(text("c", "nothing relevant")))).toBe(1);
      const first = await session.search("deployment failed");
      expect(first.map((hit) => hit.id).sort()).toEqual(["a", "b"]);
      expect(first.find((hit) => hit.id === "a")).toMatchObject({ role: "user", content: "the deployment failed at noon", sessionId: "" });
      expect(indexTable()).toBe(1);
      await session.appendMessage(text("d", "deployment failed again"));
      await session.deleteMessages(["a"]);
      await session.updateMessage(text("b", "now about lunch"));
      expect((await session.search("deployment failed")).map((hit) => hit.id)).toEqual(["d"]);
      expect((await session.search("lunch")).map((hit) => hit.id)).toEqual(["b"]);
      expect(await session.search('"')).toEqual([]);
      await session.clearMessages();
      expect(await session.search("deployment")).toEqual([]);
      expect((await sessions.session("other").search("elsewhere")).map((hit) => hit.id)).toEqual(["o"]);
    });
  });

  it("keeps being maintained after eviction", async () => {
    const stub = conversation();
    await run(stub, ({ session }) => session.search("warm"));
    await hibernate(stub);
    await run(stub, ({ session }) => session.appendMessage(text("late", "written after the index exists")));
    await hibernate(stub);
    expect(await run(stub, async ({ session }) => (await session.search("written")).map((hit) => hit.id))).toEqual(["late"]);
  });
});

describe("change feed", () => {
  it("dispatches every write in order, awaiting async listeners; a throwing listener is logged and the feed goes on", async () => {
    const stub = conversation();
    await run(stub, async ({ sessions, session, events }) => {
      const logs = captureConsole();
      const slow: string[] = [];
      sessions.subscribe(async (event) => {
        await new Promise((resolve) => setTimeout(resolve, event.type === "append" ? 5 : 0));
        slow.push(event.type);
      });
      sessions.subscribe(() => {
        throw new Error("listener broke");
      });
      await Promise.all([
        session.appendMessage(text("a", "a")),
        session.appendMessage(text("b", "b")),
        session.updateMessage(text("a", "a2")),
      ]);
      await session.importMessage(text("i", "i"), { parentId: null, createdAt: 1 });
      await session.addCompaction("s", "a", "b");
      await session.deleteMessages(["i"]);
      await session.clearMessages();
      const expected = ["append", "append", "update", "import", "compaction", "delete", "clear"];
      expect(events.map((event: SessionChangeEvent) => event.type)).toEqual(expected);
      expect(slow).toEqual(expected);
      expect(logs.error).toHaveLength(expected.length);
      expect(logs.error[0]).toBe("dokit: Sessions change listener failed: listener broke");
    });
  });

  it("mirror keeps an array in step and hands branch appends and compactions to intercept", async () => {
    const stub = conversation();
    await run(stub, async ({ session }) => {
      let cache: { id: string; text: string }[] = [];
      const applied: string[] = [];
      const stop = session.mirror({
        get: () => cache,
        set: (next) => {
          cache = next;
        },
        transform: (message) => ({ id: message.id, text: message.parts[0]?.text ?? "" }),
        intercept: (event) => event.type === "append" && event.parentId === null && event.inserted && cache.length > 0,
        onApplied: (event, entry, previous) => applied.push(`${event.type}:${entry.id}:${previous?.text ?? "-"}`),
      });
      await session.appendMessage(text("a", "1"));
      await session.appendMessage(text("b", "2"));
      await session.updateMessage(text("a", "1b"));
      expect(cache).toEqual([
        { id: "a", text: "1b" },
        { id: "b", text: "2" },
      ]);
      await session.appendMessage(text("root", "r"), { parentId: null });
      expect(cache.map((entry) => entry.id)).toEqual(["a", "b"]);
      await session.deleteMessages(["a"]);
      expect(cache.map((entry) => entry.id)).toEqual(["b"]);
      await session.clearMessages();
      expect(cache).toEqual([]);
      expect(applied).toEqual(["append:a:-", "append:b:-", "update:a:1"]);
      stop();
      await session.appendMessage(text("late", "x"));
      expect(cache).toEqual([]);
    });
  });
});

describe("sync writes inside a caller's transaction", () => {
  it("commits with the caller's other writes; after() dispatches the feed; a rollback writes nothing and abandon() resyncs", async () => {
    const stub = conversation();
    await run(stub, async ({ session, events }, ctx) => {
      ctx.storage.sql.exec("CREATE TABLE stream_rows (id TEXT PRIMARY KEY)");
      ctx.storage.sql.exec("INSERT INTO stream_rows VALUES ('t1')");
      await session.appendMessage(text("u", "question"));
      const writer = session.__DO_NOT_USE_WILL_BREAK__sync();
      const { result, after } = ctx.storage.transactionSync(() => {
        const written = writer.upsert(text("reply", "done", "assistant"));
        ctx.storage.sql.exec("DELETE FROM stream_rows");
        return written;
      });
      expect(result.inserted).toBe(true);
      expect(events.map((event) => event.type)).toEqual(["append"]);
      await after();
      expect(events.map((event) => event.type)).toEqual(["append", "append"]);
      expect(ids(await session.getHistory())).toEqual(["u", "reply"]);

      const dokitWriter = session.sync();
      expect(() =>
        ctx.storage.transactionSync(() => {
          dokitWriter.upsert(text("lost", "never", "assistant"));
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      dokitWriter.abandon();
      expect(await session.getMessage("lost")).toBeNull();
      expect((await session.getLatestLeaf())?.id).toBe("reply");
      await session.appendMessage(text("next", "after"));
      expect(ids(await session.getHistory())).toEqual(["u", "reply", "next"]);
    });
  });
});
