// The browser test: the `pnpm dev` worker (root wrangler.jsonc) started by
// wrangler on a free loopback port, driven by headless Chromium. Screenshots of
// every page go to test-output/ for a reviewer to look at.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_startWorker } from "wrangler";

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
async function open(path: string, { ready = true } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 900, height: 640 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on("pageerror", (error) => console.error(`page error on ${path}:`, error));
  await page.goto(new URL(path, base).toString());
  if (ready) await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
  return page;
}

describe("the pnpm dev worker", () => {
  it("lists every demo on its index page", async () => {
    const page = await open("/", { ready: false });
    const links = await page.locator("li > a:first-child").allTextContents();
    expect(links).toEqual(["chat", "board", "sensor-hub", "mcp-counter", "mix-in"]);
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
