// The browser test: the `pnpm dev` worker (root wrangler.jsonc) started by
// wrangler on a free loopback port, driven by headless Chromium. Screenshots of
// every page go to test-output/ for a reviewer to look at.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_startWorker } from "wrangler";
import { replyText } from "../agent-chat/src/model";

const root = fileURLToPath(new URL("../../", import.meta.url));
const shots = `${root}test-output/`;
let worker: Awaited<ReturnType<typeof unstable_startWorker>>;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  // Bundle dokit from its TypeScript source (the `@dokit/source` export condition), so
  // this tests the code as it is now, with or without `pnpm build`.
  process.env.WRANGLER_BUILD_CONDITIONS ??= "@dokit/source,workerd,worker,browser";
  process.env.WRANGLER_LOG ??= "warn"; // no line per request; errors and the objects' own logs still show
  mkdirSync(shots, { recursive: true });
  worker = await unstable_startWorker({
    config: `${root}wrangler.jsonc`,
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false },
    // The agent-chat example's demo control that crashes its object (POST …/crash), off as shipped.
    bindings: { AGENT_CHAT_CRASH: { type: "plain_text", value: "on" } },
  });
  base = (await worker.url).toString();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
});

/** Opens `path` in a fresh browser context (its own storage, like another person) and waits until its client is ready. */
async function open(path: string, { ready = true, before }: { ready?: boolean; before?: (page: Page) => void } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error(`page error on ${path}:`, error));
  before?.(page);
  await page.goto(new URL(path, base).toString());
  if (ready) await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
  return page;
}

describe("the pnpm dev worker", () => {
  it("lists every demo on its index page", async () => {
    const page = await open("/", { ready: false });
    const links = await page.locator("li > a:first-child").allTextContents();
    expect(links).toEqual(["chat", "board", "editor", "live", "build-log", "sensor-hub", "mcp-counter", "assistant", "mix-in", "approvals", "agent-chat"]);
    await page.screenshot({ path: `${shots}index.png`, fullPage: true });
  });
});

describe("chat", () => {
  it("two tabs exchange messages", async () => {
    const room = `e2e-${Date.now()}`;
    const ada = await open(`/chat/?room=${room}&nickname=ada`);
    const bob = await open(`/chat/?room=${room}&nickname=bob`);
    await expect.poll(() => ada.locator("#log").textContent()).toContain("bob joined");

    await ada.fill("input[name=text]", "hello bob");
    await ada.press("input[name=text]", "Enter");
    await bob.locator("#log li", { hasText: "ada: hello bob" }).waitFor();

    await bob.fill("input[name=text]", "hi ada, from the other tab");
    await bob.press("input[name=text]", "Enter");
    await ada.locator("#log li", { hasText: "bob: hi ada, from the other tab" }).waitFor();

    await ada.screenshot({ path: `${shots}chat-ada.png` });
    await bob.screenshot({ path: `${shots}chat-bob.png` });
  });
});

describe("board", () => {
  it("a card added in one tab appears in the other, and a view-mode tab cannot add", async () => {
    const board = `e2e-${Date.now()}`;
    const first = await open(`/board/?board=${board}`);
    const second = await open(`/board/?board=${board}`);
    const viewer = await open(`/board/?board=${board}&mode=view`);

    await first.fill("input[name=text]", "Ship the examples");
    await first.selectOption("select[name=column]", "doing");
    await first.click("text=Add card");
    await second.locator("section[aria-label=Doing] .card", { hasText: "Ship the examples" }).waitFor();
    await viewer.locator("section[aria-label=Doing] .card", { hasText: "Ship the examples" }).waitFor();

    await viewer.fill("input[name=text]", "Viewers cannot add this");
    await viewer.click("text=Add card");
    await expect.poll(() => viewer.locator("[role=alert]").textContent()).toBe("This board is view-only for you");
    await second.locator("#root").getByText("connected").waitFor();
    expect(await second.locator(".card").allTextContents()).toEqual([expect.stringContaining("Ship the examples")]);
    await first.screenshot({ path: `${shots}board-editor.png` });
    await viewer.screenshot({ path: `${shots}board-viewer.png` });

    // The Worker checks the token, then promotes this connection over DO RPC.
    await viewer.fill("input[name=token]", "let-me-edit");
    await viewer.click("text=Edit this board");
    await viewer.locator(".badge", { hasText: "editing" }).waitFor();
    await viewer.fill("input[name=text]", "Added after promotion");
    await viewer.click("text=Add card");
    await first.locator(".card", { hasText: "Added after promotion" }).waitFor();
    await first.screenshot({ path: `${shots}board-after-promotion.png` });
  });
});

describe("board presence", () => {
  it("shows who is here and the others' pointers, and says who is typing", async () => {
    const board = `e2e-presence-${Date.now()}`;
    const ann = await open(`/board/?board=${board}&name=Ann`);
    const bob = await open(`/board/?board=${board}&name=Bob`);
    const viewer = await open(`/board/?board=${board}&name=Vic&mode=view`);
    // Everyone is listed on every page, view-only pages too.
    for (const page of [ann, bob, viewer]) {
      await expect.poll(async () => (await page.locator("ul[aria-label=here] li").allTextContents()).sort()).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Ann/), expect.stringMatching(/^Bob/), expect.stringMatching(/^Vic/)]),
      );
    }
    expect(await ann.locator("ul[aria-label=here] li", { hasText: "(you)" }).textContent()).toBe("Ann (you)");
    // Ann's pointer over the board shows on Bob's page where she points (the middle of the columns).
    const box = await ann.locator(".columns").boundingBox();
    if (!box) throw new Error("no board area");
    for (let step = 0; step <= 10; step++) await ann.mouse.move(box.x + (box.width * step) / 20, box.y + (box.height * step) / 20);
    const position = async () => {
      const style = (await bob.locator(".columns .cursor", { hasText: "Ann" }).getAttribute("style")) ?? "";
      return [/left: ([\d.]+)%/, /top: ([\d.]+)%/].map((pattern) => Math.round(Number(pattern.exec(style)?.[1])));
    };
    // The latest position wins: Bob ends where Ann stopped, within a pixel's rounding.
    await expect.poll(position).toEqual([50, 50]);
    expect(await bob.locator(".columns .cursor").count()).toBe(1);
    // Typing a card in one tab says so in the others.
    await ann.locator("input[name=text]").pressSequentially("Plan the demo");
    await expect.poll(() => viewer.locator(".typing").textContent()).toBe("Ann is typing…");
    await expect.poll(() => bob.locator(".typing").textContent()).toBe("Ann is typing…");
    await bob.screenshot({ path: `${shots}board-presence.png` });
    // A page that leaves is gone from the others' list.
    await viewer.close();
    await expect.poll(async () => (await ann.locator("ul[aria-label=here] li").allTextContents()).length, { timeout: 10_000 }).toBe(2);
  });
});

describe("editor", () => {
  /** @returns the editor's text, line by line, without the others' cursors and names (widgets inside the lines) */
  const editorText = (page: Page) =>
    page.locator(".cm-content").evaluate((content) => {
      const copy = content.cloneNode(true) as HTMLElement;
      for (const widget of copy.querySelectorAll(".cm-ySelectionCaret, .cm-widgetBuffer")) widget.remove();
      return [...copy.querySelectorAll(".cm-line")].map((line) => line.textContent).join("\n");
    });

  it("text typed in one tab appears in the other with the typist's name at its cursor, survives a reload, and the inspector lists the editors by name", async () => {
    const doc = `e2e-${Date.now()}`;
    const ann = await open(`/editor/?doc=${doc}&name=Ann`);
    const bob = await open(`/editor/?doc=${doc}&name=Bob`);
    await ann.click(".cm-content");
    await ann.keyboard.type("Hello from Ann");
    await expect.poll(() => editorText(bob)).toBe("Hello from Ann");
    // Ann's cursor, with her name, in Bob's editor; both listed on both pages.
    await bob.locator(".cm-ySelectionInfo", { hasText: "Ann" }).waitFor();
    await expect.poll(async () => (await bob.locator("ul.here li").allTextContents()).sort()).toEqual(["Ann", "Bob (you)"]);
    await expect.poll(async () => (await ann.locator("ul.here li").allTextContents()).sort()).toEqual(["Ann (you)", "Bob"]);

    await bob.click(".cm-content");
    await bob.keyboard.press("Control+End");
    await bob.keyboard.type(", and Bob");
    await bob.keyboard.press("Enter");
    await bob.keyboard.type("a second line");
    await expect.poll(() => editorText(ann)).toBe("Hello from Ann, and Bob\na second line");
    await ann.locator(".cm-ySelectionInfo", { hasText: "Bob" }).waitFor();
    await ann.screenshot({ path: `${shots}editor-ann.png` });
    await bob.screenshot({ path: `${shots}editor-bob.png` });

    // The inspector shows the document's stored size and both editors, by name.
    const inspector = await open(`/agents/doc/${doc}/__dokit`);
    const editors = async () => (await inspector.locator("#yjs-editors .editor-name").allTextContents()).sort();
    await expect.poll(editors).toEqual(["Ann", "Bob"]);
    const size = await inspector.locator("#yjs-size").textContent();
    expect(size).toMatch(/^\d+ B stored \(snapshot \d+ B, \d+ updates \d+ B\), in memory$/);
    expect(Number(size?.split(" ")[0])).toBeGreaterThan("Hello from Ann, and Bob\na second line".length);
    await inspector.screenshot({ path: `${shots}editor-inspector.png`, fullPage: true });

    // A reload starts from an empty Y.Doc: the text comes back from the object's storage.
    await bob.reload();
    await bob.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    await expect.poll(() => editorText(bob)).toBe("Hello from Ann, and Bob\na second line");
    // So does a new browser, once every tab has gone.
    await Promise.all([ann.close(), bob.close()]);
    const later = await open(`/editor/?doc=${doc}&name=Cy`);
    await expect.poll(() => editorText(later)).toBe("Hello from Ann, and Bob\na second line");

    // The live inspector follows: the editors connected now.
    await expect.poll(editors).toEqual(["Cy"]);
  });
});

describe("live room", () => {
  /** @returns the lines a tab lists, `#<seq> <name>: <text>`, in the order shown */
  const lines = (page: Page) => page.locator("#log li[data-seq]").allTextContents();
  const say = async (page: Page, text: string) => {
    await page.fill("input[name=text]", text);
    await page.press("input[name=text]", "Enter");
  };

  it("three tabs on three shards see the messages of two tabs in one order and the room's count, and miss nothing across a drain and a reconnect", async () => {
    const room = `e2e-${Date.now()}`;
    const ann = await open(`/live/?room=${room}&name=Ann&shard=0`);
    const bob = await open(`/live/?room=${room}&name=Bob&shard=1`);
    const cy = await open(`/live/?room=${room}&name=Cy&shard=2`);
    const tabs = [ann, bob, cy];
    expect(await Promise.all(tabs.map((tab) => tab.locator("#shard").textContent()))).toEqual(["0", "1", "2"]);
    // Every tab shows the room's count, the first two from the count frames that followed their welcome.
    for (const tab of tabs) await expect.poll(() => tab.locator("#count").textContent()).toBe("3");

    // Two tabs on two shards post at once: every tab lists the four lines in the same order, each once.
    await Promise.all([say(ann, "Ann one"), say(bob, "Bob one")]);
    await Promise.all([say(ann, "Ann two"), say(bob, "Bob two")]);
    for (const tab of tabs) await expect.poll(async () => (await lines(tab)).length).toBe(4);
    const order = await lines(ann);
    expect(order.map((line) => line.split(" ")[0])).toEqual(["#1", "#2", "#3", "#4"]);
    expect(order.filter((line) => line.includes("Ann: "))).toEqual([expect.stringContaining("Ann one"), expect.stringContaining("Ann two")]);
    expect(order.filter((line) => line.includes("Bob: "))).toEqual([expect.stringContaining("Bob one"), expect.stringContaining("Bob two")]);
    expect(await lines(bob)).toEqual(order);
    expect(await lines(cy)).toEqual(order);
    // The host's announcement (published by the Worker) and a reaction are room messages too, in the same order.
    await bob.fill("input[name=announcement]", "Q&A starts now");
    await bob.press("input[name=announcement]", "Enter");
    await expect.poll(async () => (await lines(cy)).length).toBe(5);
    await cy.locator("button[data-emoji='👏']").click();
    for (const tab of tabs) await expect.poll(() => tab.locator("button[data-emoji='👏'] .tally").textContent()).toBe("1");
    for (const tab of tabs) await expect.poll(() => tab.locator("#seq").textContent()).toBe("6");
    const before = await lines(ann);
    expect(before.slice(4)).toEqual(["#5 host: Q&A starts now", "#6 Cy reacted 👏 clap"]);
    expect(await lines(bob)).toEqual(before);
    expect(await lines(cy)).toEqual(before);
    await ann.screenshot({ path: `${shots}live-ann.png` });

    // Cy's shard is drained: Cy reconnects by itself (close 3009) and resumes after seq 6; Ann posts meanwhile.
    await cy.click("#drain");
    await expect.poll(() => cy.locator("#drains").textContent()).toBe("1");
    await say(ann, "Ann during the drain");
    await cy.locator("#status", { hasText: "live" }).waitFor();
    expect(await cy.locator("#shard").textContent()).toBe("2");
    await expect.poll(() => cy.locator("#count").textContent()).toBe("3");
    for (const tab of tabs) await expect.poll(async () => (await lines(tab)).length).toBe(7);

    // Bob goes offline: Ann posts, Bob types a line that waits; back, Bob gets Ann's once, and the room his.
    await bob.click("#offline");
    await bob.locator("#status", { hasText: "offline" }).waitFor();
    await say(ann, "Ann while Bob is away");
    await say(bob, "Bob typed while offline");
    await expect.poll(() => bob.locator("#pending b").textContent()).toBe("1");
    await expect.poll(async () => (await lines(cy)).length).toBe(8);
    expect(await lines(bob)).toHaveLength(7);
    await bob.click("#offline");
    for (const tab of tabs) await expect.poll(async () => (await lines(tab)).length).toBe(9);
    const after = await lines(ann);
    expect(after.slice(0, 6)).toEqual(before);
    expect(after.slice(6)).toEqual(["#7 Ann: Ann during the drain", "#8 Ann: Ann while Bob is away", "#9 Bob: Bob typed while offline"]);
    expect(await lines(bob)).toEqual(after);
    expect(await lines(cy)).toEqual(after);
    await expect.poll(() => bob.locator("#pending").count()).toBe(0);
    await cy.screenshot({ path: `${shots}live-cy.png` });
    await bob.screenshot({ path: `${shots}live-bob.png` });

    // The tab's link to its shard's live inspector answers (localhost), on the shard the tab is on.
    const inspect = await cy.locator("a", { hasText: "inspect this shard" }).getAttribute("href");
    expect(inspect).toBe(`/agents/live-shard/${room}%232/__dokit`);
    expect((await cy.request.get(new URL(inspect as string, base).toString())).status()).toBe(200);
  });
});

describe("sensor hub", () => {
  it("shows a simulated sensor's readings live", async () => {
    const page = await open("/sensor-hub/");
    await page.click("text=Start a simulated sensor");
    await page.locator("tr[data-sensor=sim-1]").waitFor();
    await expect.poll(async () => Number(await page.locator("tr[data-sensor=sim-1] td").nth(5).textContent()), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    // The device got answers to its calls, never an identity or state frame.
    expect(await page.locator("#device").textContent()).not.toContain("cf_agent");
    await page.screenshot({ path: `${shots}sensor-hub.png` });
    await page.click("text=Stop sensors");
  });
});

describe("mix-in", () => {
  it("an old socket and a dokit client both change and see the same counter", async () => {
    const page = await open("/mix-in/");
    const before = Number(await page.locator("#count").textContent());
    await page.click("text=+1 through dokit");
    await expect.poll(() => page.locator("#count").textContent()).toBe(String(before + 1));
    await page.click("text=+1 through the old socket");
    await expect.poll(() => page.locator("#count").textContent()).toBe(String(before + 2));
    await page.locator("#log li", { hasText: `old socket saw count:${before + 2}` }).waitFor();
    await page.screenshot({ path: `${shots}mix-in.png` });
  });
});

describe("build-log", () => {
  it("shows a build's log growing; reloaded mid-build, it continues from its cursor without repeating a line", async () => {
    const page = await open("/build-log/");
    await page.click("#start");
    const lines = async () => ((await page.locator("#log").textContent()) ?? "").split("\n").filter(Boolean);
    await expect.poll(async () => (await lines()).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    await page.reload();
    await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    expect((await lines()).length).toBeGreaterThanOrEqual(3); // what it had, shown at once
    await page.waitForSelector("body[data-done]", { timeout: 30_000 });
    expect(await lines()).toEqual(Array.from({ length: 40 }, (_, i) => expect.stringContaining(`line ${i + 1} of 40`)));
    await page.screenshot({ path: `${shots}build-log.png` });
  });
});

describe("agent-chat", () => {
  it("shows the reply growing; reloaded mid-reply, it continues without repeating a token, and the reply lands in the history", async () => {
    const question = "Does the reply survive a reload?";
    const expected = replyText(question); // the scripted model's reply, token by token
    const page = await open(`/agent-chat/?chat=e2e-${Date.now()}`);
    await page.fill("input[name=text]", question);
    await page.press("input[name=text]", "Enter");
    await page.locator("#history li.user", { hasText: question }).waitFor();
    const reply = async () => (await page.locator("#reply").textContent()) ?? "";
    await expect.poll(async () => (await reply()).length).toBeGreaterThan(0);
    const first = await reply();
    await expect.poll(async () => (await reply()).length).toBeGreaterThan(first.length + 20); // growing
    const before = await reply();
    expect(expected.startsWith(before)).toBe(true);
    await page.screenshot({ path: `${shots}agent-chat-mid-reply.png` });
    await page.reload();
    await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
    // At once what it had, mid-reply; then every later view is a longer prefix of the reply: never a token twice.
    const seen = [await reply()];
    expect(seen[0]!.length).toBeGreaterThanOrEqual(before.length);
    expect(seen[0]!.length).toBeLessThan(expected.length);
    const answered = page.locator("#history li.assistant");
    for (let i = 0; i < 400 && (await answered.count()) === 0; i++) {
      seen.push(await reply());
      await page.waitForTimeout(50);
    }
    const growing = seen.filter((text) => text !== "");
    for (const text of growing) expect(expected.startsWith(text), `"${text}" is not a prefix of the reply`).toBe(true);
    expect(growing.map((text) => text.length)).toEqual([...growing.map((text) => text.length)].sort((a, b) => a - b));
    expect(new Set(growing).size).toBeGreaterThan(1); // it went on growing after the reload
    expect(await answered.textContent()).toBe(expected);
    expect(await page.locator("#history li").allTextContents()).toEqual([question, expected]);
    await expect.poll(reply).toBe(""); // the growing copy gives way to the message
    await page.screenshot({ path: `${shots}agent-chat.png` });
  });

  it("with its object crashed mid-reply (ctx.abort), the turn resumes: the reply goes on growing and lands with every token once, in order", async () => {
    const question = "Does the reply survive a crash?";
    const expected = replyText(question);
    const chat = `e2e-crash-${Date.now()}`;
    // The page's WebSockets: the crash closes the one it has, and its client opens another.
    const sockets: { closed: boolean }[] = [];
    const page = await open(`/agent-chat/?chat=${chat}`, {
      before: (page) =>
        page.on("websocket", (socket) => {
          const seen = { closed: false };
          sockets.push(seen);
          socket.on("close", () => (seen.closed = true));
        }),
    });
    expect(sockets).toEqual([{ closed: false }]);
    await page.fill("input[name=text]", question);
    await page.press("input[name=text]", "Enter");
    await page.locator("#history li.user", { hasText: question }).waitFor();
    const reply = async () => (await page.locator("#reply").textContent()) ?? "";
    await expect.poll(async () => (await reply()).length).toBeGreaterThan(20);
    // Every view of the reply, from just before the crash until the reply lands in the history.
    const seen = [await reply()];
    const crashed = await fetch(new URL(`/agents/agent-chat/${chat}/crash`, base), { method: "POST" });
    expect(crashed.status, "the crash control is on in this test").toBe(202);
    const answered = page.locator("#history li.assistant");
    for (let i = 0; i < 400 && (await answered.count()) === 0; i++) {
      seen.push(await reply());
      await page.waitForTimeout(50);
    }
    // The object did crash: the page's socket closed and its client connected again.
    expect(sockets.length).toBeGreaterThanOrEqual(2);
    expect(sockets[0]?.closed).toBe(true);
    const atCrash = seen[0]!;
    expect(atCrash.length).toBeLessThan(expected.length);
    // Every view is a prefix of the reply, each at least as long as the one before: no token twice, none out of order.
    const growing = seen.filter((text) => text !== "");
    for (const text of growing) expect(expected.startsWith(text), `"${text}" is not a prefix of the reply`).toBe(true);
    expect(growing.map((text) => text.length)).toEqual([...growing.map((text) => text.length)].sort((a, b) => a - b));
    // It went on growing after the crash, before the reply landed: the resumed turn streamed on to the page.
    expect(new Set(growing.filter((text) => text.length > atCrash.length && text.length < expected.length)).size).toBeGreaterThan(1);
    // The reply that lands has every token once, in order.
    expect(await answered.textContent()).toBe(expected);
    expect(await page.locator("#history li").allTextContents()).toEqual([question, expected]);
    await expect.poll(reply).toBe("");
    await page.screenshot({ path: `${shots}agent-chat-crash.png` });
  });
});

describe("mcp-counter", () => {
  it("the page updates after a tool call made by the official MCP client", async () => {
    const name = `e2e-${Date.now()}`;
    const page = await open(`/mcp-counter/?counter=${name}`);
    await expect.poll(() => page.locator("#count").textContent()).toBe("0");

    const client = new Client({ name: "dokit-e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`/agents/mcp-counter/${name}/mcp`, base)));
    try {
      const result = await client.callTool({ name: "increment", arguments: { by: 7 } });
      expect(result.content).toEqual([{ type: "text", text: "The count is now 7." }]);
      await expect.poll(() => page.locator("#count").textContent()).toBe("7");
      await expect.poll(() => page.locator("#last").textContent()).toContain("+7 by an MCP tool call");
    } finally {
      await client.close();
    }
    await page.screenshot({ path: `${shots}mcp-counter.png` });
  });
});

describe("assistant", () => {
  it("adds the mcp-counter server, shows its tools from cf_agent_mcp_servers, and calls one", async () => {
    const name = `e2e-${Date.now()}`;
    const page = await open(`/assistant/?assistant=${name}&counter=${name}`);
    const counter = await open(`/mcp-counter/?counter=${name}`);
    await expect.poll(() => counter.locator("#count").textContent()).toBe("0");
    expect(await page.locator("#servers").textContent()).toContain("No servers yet.");
    // The form is prefilled with this Worker's mcp-counter endpoint.
    expect(await page.inputValue("input[name=url]")).toBe(new URL(`/agents/mcp-counter/${name}/mcp`, base).toString());

    await page.click("text=Add server");
    const server = page.locator("#servers li[data-server]");
    await expect.poll(() => server.locator(".state").textContent()).toBe("ready");
    expect(await server.locator("b").textContent()).toBe("counter");
    const increment = page.locator("#tools li[data-tool=increment]");
    await increment.waitFor();
    expect(await page.locator("#tools li[data-tool]").evaluateAll((items) => items.map((item) => (item as HTMLElement).dataset.tool).sort())).toEqual([
      "get_count",
      "increment",
    ]);
    // The argument box starts from the tool's schema defaults.
    expect(await increment.locator("input").inputValue()).toBe('{"by":1}');

    await increment.locator("input").fill('{"by": 4}');
    await increment.locator("button", { hasText: "Call" }).click();
    await expect.poll(() => page.locator("#result").textContent()).toBe("increment: The count is now 4.");
    // The tool ran in the counter object: its own page shows the change live.
    await expect.poll(() => counter.locator("#count").textContent()).toBe("4");
    await page.screenshot({ path: `${shots}assistant.png`, fullPage: true });

    // A second tab gets the list on connect; removing the server updates both.
    const other = await open(`/assistant/?assistant=${name}`);
    await expect.poll(() => other.locator("#servers li[data-server] .state").textContent()).toBe("ready");
    await other.locator("#servers li[data-server] button", { hasText: "Remove" }).click();
    await expect.poll(() => page.locator("#servers").textContent()).toContain("No servers yet.");
    await expect.poll(() => page.locator("#tools").textContent()).toContain("No tools yet.");
  });
});

describe("the official useAgent({ onMcpUpdate }) from agents/react, unchanged", () => {
  it("receives the assistant's MCP servers on connect and after each change", async () => {
    // One React component calling the official hook, bundled here (agents, react and react-dom
    // resolve from packages/dokit, whose devDependencies they are).
    const entry = `
      import { createElement } from "react";
      import { createRoot } from "react-dom/client";
      import { useAgent } from "agents/react";
      window.updates = [];
      function App() {
        window.agent = useAgent({ agent: "Assistant", name: window.OBJECT, host: window.HOST, onMcpUpdate: (mcp) => window.updates.push(mcp) });
        return null;
      }
      createRoot(document.getElementById("root")).render(createElement(App));`;
    const bundle = await build({
      stdin: { contents: entry, resolveDir: `${root}packages/dokit`, loader: "js" },
      bundle: true,
      format: "iife",
      platform: "browser",
      write: false,
      define: { "process.env.NODE_ENV": '"production"' },
      logLevel: "silent",
    });
    const name = `official-${Date.now()}`;
    const host = new URL(base).host;
    const context = await browser.newContext();
    contexts.push(context);
    const tab = await context.newPage();
    // On the Worker's own origin: a secure context (the client's call ids need crypto.randomUUID).
    await tab.goto(base);
    await tab.setContent(`<div id="root"></div><script>window.OBJECT=${JSON.stringify(name)};window.HOST=${JSON.stringify(host)}</script>`);
    await tab.addScriptTag({ content: bundle.outputFiles[0]?.text ?? "" });
    type Update = { servers: Record<string, { state: string; name: string; server_url: string }>; tools: { name: string; serverId: string }[] };
    // SAFETY: runs in the page, where the entry above set `updates` on the global object.
    const updates = () => tab.evaluate(() => (globalThis as unknown as { updates: Update[] }).updates);
    await expect.poll(updates).toEqual([{ servers: {}, tools: [], prompts: [], resources: [] }]);

    const url = new URL(`/agents/mcp-counter/${name}/mcp`, base).toString();
    // The assistant's addServer callable, called through the official hook's own `call`.
    const added = await tab.evaluate(
      (target) => (globalThis as unknown as { agent: { call(method: string, args: unknown[]): Promise<unknown> } }).agent.call("addServer", [target, "counter"]),
      url,
    );
    expect(added).toMatchObject({ state: "ready" });
    await expect.poll(async () => Object.values((await updates()).at(-1)?.servers ?? {})[0]?.state).toBe("ready");
    const last = (await updates()).at(-1) as Update;
    expect(Object.values(last.servers)[0]).toMatchObject({ name: "counter", server_url: url });
    expect(last.tools.map((tool) => tool.name).sort()).toEqual(["get_count", "increment"]);
    expect((await updates()).map((update) => Object.values(update.servers)[0]?.state ?? "none")).toEqual(expect.arrayContaining(["none", "ready"]));
  });
});

describe("inspector", () => {
  it("shows a connection, its tags and flags, the state and the rpc event live, and closes a connection for its client", async () => {
    // The pnpm dev index links to an inspector per example, and each answers (localhost passes the default guard).
    const index = await open("/", { ready: false });
    const links = await index.locator("a.inspect").evaluateAll((anchors) => anchors.map((a) => (a as HTMLAnchorElement).href));
    expect(links).toEqual(expect.arrayContaining([new URL("/agents/board/demo/__dokit", base).toString()]));
    for (const link of links) {
      const response = await index.request.get(link);
      expect(response.status(), link).toBe(200);
      expect(await response.text(), link).toContain("<title>dokit inspector</title>");
    }

    const board = `e2e-inspect-${Date.now()}`;
    const inspector = await open(`/agents/board/${board}/__dokit`);
    await expect.poll(() => inspector.locator("#status").textContent()).toBe("live");
    await expect.poll(() => inspector.locator("#title").textContent()).toBe(`Board · ${board}`);

    // The test's own clients: two plain WebSockets in another tab, one of them view-only.
    const clients = await open("/", { ready: false });
    await clients.evaluate(async (name) => {
      const sockets: Record<string, { ws: WebSocket; closed?: { code: number; reason: string } }> = {};
      (window as unknown as { sockets: typeof sockets }).sockets = sockets;
      const connect = (id: string, query: string) =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(`${location.origin.replace("http", "ws")}/agents/board/${name}?_pk=${id}${query}`);
          const entry: { ws: WebSocket; closed?: { code: number; reason: string } } = { ws };
          sockets[id] = entry;
          ws.onopen = () => resolve();
          ws.onerror = () => reject(new Error(`${id} failed to open`));
          ws.onclose = (event) => void (entry.closed = { code: event.code, reason: event.reason });
        });
      await connect("e2e-viewer", "&mode=view");
      await connect("e2e-editor", "");
    }, board);

    const viewer = inspector.locator("tr[data-connection=e2e-viewer]");
    const editor = inspector.locator("tr[data-connection=e2e-editor]");
    await viewer.waitFor();
    await editor.waitFor();
    expect(await viewer.locator(".tag").allTextContents()).toEqual(["e2e-viewer"]);
    expect(await viewer.locator(".flag-readonly").textContent()).toBe("readonly");
    expect(await viewer.locator(".flag-protocol").textContent()).toBe("protocol");
    expect(await viewer.locator(".ready-state").textContent()).toBe("open");
    expect(await editor.locator(".flag-readonly").textContent()).toBe("writable");
    await expect.poll(() => inspector.locator("#connection-count").textContent()).toBe("(2 open)");

    // An rpc call from the editor changes the state: the page shows both, live.
    await clients.evaluate(() => {
      const { sockets } = window as unknown as { sockets: Record<string, { ws: WebSocket }> };
      sockets["e2e-editor"]?.ws.send(JSON.stringify({ type: "rpc", id: "1", method: "addCard", args: ["Inspect me", "doing"] }));
    });
    await expect.poll(() => inspector.locator("#state").textContent()).toContain("Inspect me");
    const rpc = inspector.locator('#events tr[data-type="rpc"]', { hasText: "e2e-editor" });
    await rpc.first().waitFor();
    expect(await rpc.first().textContent()).toContain("addCard");
    await inspector.screenshot({ path: `${shots}inspector.png`, fullPage: true });

    // The log's filters: by text, and by channel.
    await inspector.fill("#filter", "addCard");
    await expect.poll(() => inspector.locator("#events tr.event").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-type")))).toEqual(["rpc"]);
    await inspector.fill("#filter", "");
    await inspector.locator('#channels input[data-channel="agents:lifecycle"]').uncheck();
    expect(await inspector.locator('#events tr.event[data-channel="agents:lifecycle"]').count()).toBe(0);
    expect(await inspector.locator('#events tr.event[data-channel="agents:rpc"]').count()).toBeGreaterThan(0);
    await inspector.locator('#channels input[data-channel="agents:lifecycle"]').check();

    // Toggle readonly from the page: the flag changes for the connection.
    await editor.locator("button.toggle-readonly").click();
    await expect.poll(() => editor.locator(".flag-readonly").textContent()).toBe("readonly");

    // Close the viewer from the page: its client sees the close, with the inspector's code and reason. (The close is
    // issued outside a hibernation socket event, so Chromium reports it when it gives up waiting for the TCP close,
    // about 2 s later: docs/inspector.md.)
    await viewer.locator("button.close").click();
    await expect
      .poll(() => clients.evaluate(() => (window as unknown as { sockets: Record<string, { closed?: unknown }> }).sockets["e2e-viewer"]?.closed), { timeout: 15_000 })
      .toEqual({ code: 1000, reason: "Closed from the dokit inspector" });
    await expect.poll(() => inspector.locator("#connection-count").textContent()).toBe("(1 open)");
    expect(await clients.evaluate(() => (window as unknown as { sockets: Record<string, { ws: WebSocket }> }).sockets["e2e-editor"]?.ws.readyState)).toBe(1);
  });
});
