// The docs' examples, checked as a reader uses them. Every fenced block marked
// `<!-- example: NAME -->` (in README.md and docs/*.md) is a complete
// `src/index.ts` for the README's quick-start project: it is saved into a copy of
// that project (package.json, wrangler.jsonc, env.d.ts and tsconfig.json, taken
// from the README's quick-start blocks), with `binding=Class` in the marker
// putting that class where the quick start has `Counter`. A block marked
// `<!-- example: NAME/PATH -->` is the file PATH of the example NAME and replaces
// the quick start's file of that path (a `src/env.d.ts` replaces `env.d.ts`).
// `skipLibCheck` in the marker: the page tells the reader to set it (a
// dependency's own .d.ts does not typecheck against the workers types).
//
// One `tsc -b` typechecks every example with the quick start's compiler options,
// `dokit/*` resolved to this workspace's source. The installed packages' .d.ts
// files are checked once, in a project of their own that imports all of them
// (what `skipLibCheck: false` checks does not depend on the example), so each
// example's project skips them. Then every Worker example runs in workerd
// (wrangler's unstable_startWorker on a loopback port) and answers one real
// question over HTTP or WebSockets; docs/testing.md's project is typechecked only
// (running it would take vitest inside vitest).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { unstable_startWorker } from "wrangler";

const repo = join(import.meta.dirname, "..");
const dokit = join(repo, "packages/dokit");
const pages = ["README.md", ...readdirSync(join(repo, "docs")).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`)];

interface Block {
  page: string;
  line: number;
  example: string;
  path: string;
  binding: string | undefined;
  skipLibCheck: boolean;
  body: string;
}

/** The fenced block right after each `<!-- example: NAME[/PATH] [binding=Class] -->` of every page. */
function exampleBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const page of pages) {
    const text = readFileSync(join(repo, page), "utf8");
    for (const match of text.matchAll(/<!-- example: ([^\s/]+)(\/\S+)?((?: [\w=]+)*) -->\n```\w*\n([\s\S]*?)```\n/g)) {
      const [, example, path, options, body] = match as unknown as [string, string, string | undefined, string, string];
      const binding = /binding=(\w+)/.exec(options)?.[1];
      const skipLibCheck = / skipLibCheck\b/.test(options);
      const line = text.slice(0, match.index).split("\n").length;
      blocks.push({ page, line, example, path: path?.slice(1) ?? "src/index.ts", binding, skipLibCheck, body });
    }
    // A marker the pattern above missed (a typo, a blank line before the fence) would silently check nothing.
    const markers = text.match(/<!-- example:/g)?.length ?? 0;
    expect(blocks.filter((block) => block.page === page).length, `${page}: a <!-- example: … --> marker not right before a fenced block`).toBe(markers);
  }
  return blocks;
}

/** The README's quick-start files, by path. */
function quickStart(): Map<string, string> {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  return new Map([...readme.matchAll(/<!-- quick-start: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)].map((match) => [match[1]!, match[2]!]));
}

/** What a block imports from packages (dokit's subpaths included; not the runtime's or Node's modules, not its own files). */
function packageImports(body: string): string[] {
  return [...body.matchAll(/^import [^;]*? from "([^"]+)";/gm)].map((match) => match[1]!).filter((name) => !/^(cloudflare:|node:|\.)/.test(name));
}

/** Packages a block imports that a reader installs besides dokit. */
function installedImports(body: string): string[] {
  return packageImports(body)
    .filter((name) => !/^dokit(\/|$)/.test(name))
    .map((name) => (name.startsWith("@") ? name.split("/").slice(0, 2).join("/") : name.split("/")[0]!));
}

/** @returns the `@types/…` package that types `name`, when `name` ships no types of its own */
function typesPackage(name: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(installed(name), "package.json"), "utf8")) as { types?: string; typings?: string; exports?: unknown };
  if (manifest.types || manifest.typings || JSON.stringify(manifest.exports ?? {}).includes('"types"')) return undefined;
  return existsSync(join(installed(name), "index.d.ts")) ? undefined : `@types/${name.replace(/^@(.*)\//, "$1__")}`;
}

/** Where this workspace has a package: the root's node_modules, then dokit's (its dev dependencies). */
function installed(name: string): string {
  for (const base of [repo, dokit]) if (existsSync(join(base, "node_modules", name, "package.json"))) return join(base, "node_modules", name);
  throw new Error(`no package ${name} in this workspace (node_modules of the root or packages/dokit)`);
}

const dokitSubpaths = Object.keys(JSON.parse(readFileSync(join(dokit, "package.json"), "utf8")).exports as Record<string, unknown>)
  .filter((subpath) => subpath !== "./package.json")
  .map((subpath) => subpath.slice(2));

/** The reader's tsconfig, plus this workspace's way to reach dokit's source (its exports' `@dokit/source` condition). */
function checkConfig(skipLibCheck: boolean): string {
  return JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { customConditions: ["@dokit/source"], noEmit: true, ...(skipLibCheck && { skipLibCheck }) } });
}

let dir = "";
let blocks: Block[] = [];
const projects = new Map<string, Map<string, string>>(); // example name → path → contents

beforeAll(() => {
  blocks = exampleBlocks();
  const start = quickStart();
  dir = mkdtempSync(join(tmpdir(), "dokit-doc-examples-"));
  const packages = new Set(["@cloudflare/workers-types"]);
  const checked = new Set<string>(); // what examples without skipLibCheck import: the reader's tsc checks every .d.ts it reaches
  for (const block of blocks) {
    const files = projects.get(block.example) ?? new Map<string, string>();
    projects.set(block.example, files);
    expect(files.has(block.path), `${block.page}:${block.line}: a second block for ${block.example}/${block.path}`).toBe(false);
    files.set(block.path, block.body);
    for (const name of installedImports(block.body)) packages.add(name);
  }
  for (const [example, files] of projects) {
    const marked = blocks.filter((block) => block.example === example);
    const binding = marked.find((block) => block.binding)?.binding ?? "Counter";
    for (const path of ["package.json", "tsconfig.json", "wrangler.jsonc", "env.d.ts"]) {
      if (files.has(path) || (path === "env.d.ts" && files.has("src/env.d.ts"))) continue;
      files.set(path, start.get(path)!.replaceAll("Counter", binding).replaceAll('"counter"', `"${example}"`));
    }
    if (!marked.some((block) => block.skipLibCheck) && !files.get("tsconfig.json")!.includes('"skipLibCheck": true')) {
      for (const block of marked) for (const name of packageImports(block.body)) checked.add(name);
    }
    for (const [path, body] of files) {
      mkdirSync(dirname(join(dir, example, path)), { recursive: true });
      writeFileSync(join(dir, example, path), body);
    }
    writeFileSync(join(dir, example, "tsconfig.check.json"), checkConfig(true));
  }
  // The packages' own declarations (dokit's dependencies' among them), checked once as the quick start's tsconfig checks them.
  mkdirSync(join(dir, "libraries"));
  writeFileSync(join(dir, "libraries/tsconfig.json"), start.get("tsconfig.json")!);
  writeFileSync(join(dir, "libraries/index.ts"), [...checked].map((name, i) => `import type * as _${i} from "${name}";\n`).join("") + "export {};\n");
  writeFileSync(join(dir, "libraries/tsconfig.check.json"), checkConfig(false));
  const references = ["libraries", ...projects.keys()].map((example) => ({ path: `${example}/tsconfig.check.json` }));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ files: [], references }));
  mkdirSync(join(dir, "node_modules/@cloudflare"), { recursive: true });
  mkdirSync(join(dir, "node_modules/@modelcontextprotocol"), { recursive: true });
  symlinkSync(dokit, join(dir, "node_modules/dokit"));
  for (const name of packages) symlinkSync(installed(name), join(dir, "node_modules", name));
  // A package without its own types (ws) is typed by its @types package, which its page says to install.
  mkdirSync(join(dir, "node_modules/@types"));
  for (const name of packages) if (typesPackage(name)) symlinkSync(installed(typesPackage(name)!), join(dir, "node_modules", typesPackage(name)!));
});

afterAll(() => {
  if (dir && !process.env.DOC_EXAMPLES_KEEP) rmSync(dir, { recursive: true, force: true });
});

describe("the docs' examples", () => {
  it("mark the main example of every capability's page: its first TypeScript block", () => {
    const marked = new Set(blocks.map((block) => block.page));
    expect(marked, "README.md has no <!-- example: … --> block").toContain("README.md");
    const capabilities = ["state", "schedule", "queue", "mcp-client", "mcp", "websockets", "presence", "rooms", "yjs", "callables", "lifecycle", "inspector", "observability", "routing", "testing", "streams", "tasks", "sessions"];
    for (const page of capabilities.map((name) => `docs/${name}.md`)) {
      const text = readFileSync(join(repo, page), "utf8");
      const first = text.indexOf("\n```ts\n");
      expect(/<!-- example: [^>]*-->$/.test(text.slice(0, first)), `${page}: its first \`\`\`ts block is not marked <!-- example: … -->`).toBe(true);
    }
  });

  it("say which class they bind and which packages to install", () => {
    for (const block of blocks) {
      const where = `${block.page}:${block.line} (${block.example}/${block.path})`;
      const binding = block.binding ?? "Counter";
      if (block.path === "src/index.ts" && !projects.get(block.example)!.has("src/env.d.ts")) {
        expect(new RegExp(`^export class ${binding} extends DurableObject<Env>`, "m").test(block.body), `${where}: exports no class ${binding}`).toBe(true);
        expect(/^export default /m.test(block.body), `${where}: no Worker (export default)`).toBe(true);
        const first = block.body.split("\n", 1)[0]!;
        expect(first, `${where}: the first line says which file it is`).toMatch(/^\/\/ src\/index\.ts/);
        if (binding !== "Counter") expect(first, `${where}: the first line says ${binding} replaces Counter`).toContain(`${binding} in place of Counter`);
      }
      const page = readFileSync(join(repo, block.page), "utf8");
      for (const name of installedImports(block.body)) {
        for (const needed of [name, typesPackage(name)].filter((each) => each !== undefined)) {
          const said = new RegExp(`(npm install|pnpm add)( -D)?( [\\w@/.-]+)* ${needed.replace(/[/.]/g, "\\$&")}(\\s|\`|$)`, "m");
          expect(said.test(page), `${where} imports ${name}, and ${block.page} never says \`npm install ${needed}\``).toBe(true);
        }
      }
      if (block.skipLibCheck) expect(page.includes('"skipLibCheck": true'), `${where}: ${block.page} never tells the reader to set "skipLibCheck": true`).toBe(true);
    }
  });

  it("typecheck with the quick start's compiler options", async () => {
    const tsc = join(repo, "node_modules/typescript/bin/tsc");
    const result = await promisify(execFile)(process.execPath, [tsc, "-b", "--pretty", "false"], { cwd: dir }).then(
      () => "",
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
    );
    // Each error line names the example's file; point it back at the page and line it came from.
    const located = result.replace(/^([\w-]+)\/(\S+?)\((\d+),(\d+)\)/gm, (whole, example: string, path: string, line: string) => {
      const block = blocks.find((candidate) => candidate.example === example && candidate.path === path);
      return block ? `${block.page}:${block.line + 1 + Number(line)} (${whole})` : whole;
    });
    // An error in node_modules comes from the `libraries` project: a package's own .d.ts that the quick start's
    // tsconfig (no skipLibCheck) refuses. The page using it must say to set skipLibCheck, and its marker say `skipLibCheck`.
    expect(located, `${blocks.length} blocks in ${projects.size} projects`).toBe("");
  }, 240_000);
});

/** Serves an example's project on local workerd (wrangler, a free loopback port), bundled from dokit's source, until the test ends. */
async function serve(example: string): Promise<URL> {
  const project = join(dir, example);
  // Aliases, since wrangler's bundler knows only the published conditions (dist may be stale or absent).
  const alias = Object.fromEntries(dokitSubpaths.map((subpath) => [`dokit/${subpath}`, join(dokit, "src", subpath, "index.ts")]));
  const wrangler = readFileSync(join(project, "wrangler.jsonc"), "utf8").replace(/\n}\s*$/, `,\n  "alias": ${JSON.stringify(alias)}\n}\n`);
  writeFileSync(join(project, "wrangler.check.jsonc"), wrangler);
  process.env.WRANGLER_LOG ??= "none";
  const worker = await unstable_startWorker({
    config: join(project, "wrangler.check.jsonc"),
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false },
  });
  onTestFinished(() => worker.dispose());
  return worker.url;
}

/** A real WebSocket (Node's) and its messages in order. */
async function open(url: URL | string) {
  const socket = new WebSocket(url);
  const messages: string[] = [];
  const waiting: ((message: string) => void)[] = [];
  socket.addEventListener("message", (event) => {
    const next = waiting.shift();
    if (next) next(String(event.data));
    else messages.push(String(event.data));
  });
  await new Promise((resolve, reject) => (socket.addEventListener("open", resolve), socket.addEventListener("error", reject)));
  const next = (timeoutMs = 5_000) =>
    messages.length
      ? Promise.resolve(messages.shift()!)
      : new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no message within ${timeoutMs} ms`)), timeoutMs);
          waiting.push((message) => (clearTimeout(timer), resolve(message)));
        });
  return { socket, next, nextJSON: async () => JSON.parse(await next()) as unknown };
}

describe("examples run in workerd", () => {
  it("docs/state.md: a view-only connection is refused, the schema's output is what every client gets", async () => {
    const url = await serve("state");
    const board = new URL("/agents/board/team-1", url);
    board.protocol = "ws:";
    const editor = await open(board);
    const viewer = await open(`${board}?mode=view`);
    for (const client of [editor, viewer]) {
      expect(await client.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "board", name: "team-1" });
      expect(await client.nextJSON()).toEqual({ type: "cf_agent_state", state: { title: "Untitled", cards: [] } });
    }

    viewer.socket.send(JSON.stringify({ type: "cf_agent_state", state: { title: "Mine", cards: [] } }));
    expect(await viewer.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });
    expect(await viewer.nextJSON()).toEqual({ type: "cf_agent_state", state: { title: "Untitled", cards: [] } });

    // The schema trims the title: the stored value goes to the viewer, and back to the sender.
    editor.socket.send(JSON.stringify({ type: "cf_agent_state", state: { title: "  Roadmap  ", cards: [] } }));
    expect(await viewer.nextJSON()).toEqual({ type: "cf_agent_state", state: { title: "Roadmap", cards: [] } });
    expect(await editor.nextJSON()).toEqual({ type: "cf_agent_state", state: { title: "Roadmap", cards: [] } });
    for (const client of [editor, viewer]) client.socket.close();
  }, 120_000);

  it("docs/sessions.md: the transcript over HTTP, pages and live appends over WebSockets, a reader's write refused", async () => {
    const url = await serve("sessions");
    const ask = async (text: string) => (await fetch(new URL("/ask/demo", url), { method: "POST", body: text })).json();
    expect(await ask("hello")).toEqual(["user: hello", "assistant: You said: hello"]);
    const base = new URL("/agents/conversation/demo", url);
    base.protocol = "ws:";
    const reader = await open(base);
    expect(await reader.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "conversation", name: "demo" });
    reader.socket.send(JSON.stringify({ type: "dokit_session", op: "watch", session: "" }));
    reader.socket.send(JSON.stringify({ type: "dokit_session", op: "page", id: "p", session: "", limit: 1 }));
    expect(await reader.nextJSON()).toMatchObject({ op: "page", id: "p", more: true, messages: [{ role: "assistant", parts: [{ type: "text", text: "You said: hello" }] }] });
    reader.socket.send(JSON.stringify({ type: "dokit_session", op: "append", id: "w", session: "", message: { id: "x", role: "user", parts: [] } }));
    expect(await reader.nextJSON()).toMatchObject({ type: "dokit_error", code: "SESSION_FORBIDDEN", id: "w" });
    const member = await open(`${base}?role=member`);
    await member.next();
    member.socket.send(JSON.stringify({ type: "dokit_session", op: "append", id: "m", session: "", message: { id: "from-page", role: "user", parts: [{ type: "text", text: "hi" }] } }));
    expect(await member.nextJSON()).toEqual({ type: "dokit_session", op: "ack", id: "m", session: "", inserted: true });
    expect(await reader.nextJSON()).toMatchObject({ op: "event", event: { type: "append", message: { id: "from-page" }, inserted: true } });
    expect(await ask("again")).toHaveLength(5);
    expect(await reader.nextJSON()).toMatchObject({ op: "event", event: { type: "append", message: { role: "user", parts: [{ text: "again" }] } } });
    for (const client of [reader, member]) client.socket.close();
  }, 120_000);

  it("README.md's mix-in: the object's own route and sockets answer beside dokit's connection and callable", async () => {
    const url = await serve("mix-in");
    const own = await fetch(new URL("/anything", url));
    expect(await own.text()).toBe("the object's own route");

    const base = new URL(url);
    base.protocol = "ws:";
    const dokitSocket = await open(new URL("/agents/counter/main", base));
    expect(await dokitSocket.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "counter", name: "main" });
    const legacy = await open(new URL("/legacy", base));
    legacy.socket.send("hello");
    expect(await legacy.next()).toBe("HELLO");
    dokitSocket.socket.send(JSON.stringify({ type: "rpc", id: "1", method: "ping", args: [] }));
    expect(await dokitSocket.nextJSON()).toMatchObject({ type: "rpc", id: "1", success: true, result: "pong" });
    for (const client of [dokitSocket, legacy]) client.socket.close();
  }, 120_000);

  // Every other page's example, started the same way and asked one real question, so an error that
  // only shows when the object is built or the Worker runs (a claim, a missing table) fails here.
  const ws = (url: URL, path: string) => Object.assign(new URL(path, url), { protocol: "ws:" });

  it("docs/websockets.md: a message reaches the others in its room only", async () => {
    const url = await serve("websockets");
    const [alice, bob, carol] = await Promise.all(["a", "a", "b"].map((room) => open(ws(url, `/agents/chat-room/main?room=${room}`))));
    for (const client of [alice!, bob!, carol!]) expect(await client.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "chat-room" });
    alice!.socket.send("hi room a");
    expect(await bob!.next()).toBe("hi room a");
    await expect(carol!.next(300)).rejects.toThrow("no message");
    for (const client of [alice!, bob!, carol!]) client.socket.close();
  }, 120_000);

  it("docs/websockets.md: a user-written plug-in claims its frame and its binary message, and keeps each vote in its slot", async () => {
    const url = await serve("websockets-plugin");
    const [ann, bob] = await Promise.all(["ann", "bob"].map((id) => open(ws(url, `/agents/poll/main?_pk=${id}`))));
    for (const client of [ann!, bob!]) expect(await client.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "poll" });
    await ann!.nextJSON();
    await bob!.nextJSON();
    ann!.socket.send(JSON.stringify({ type: "vote", choice: "tea" }));
    expect(await bob!.nextJSON()).toEqual({ type: "tally", tally: { tea: 1 } });
    bob!.socket.send(new Uint8Array([0x56]));
    expect(await bob!.nextJSON()).toEqual({ type: "tally", tally: { tea: 1 } });
    for (const client of [ann!, bob!]) client.socket.close();
  }, 120_000);

  it("docs/presence.md: a watcher sees another connection join, and a refused value is told to its sender", async () => {
    const url = await serve("presence");
    const [ann, bob] = await Promise.all(["ann", "bob"].map((id) => open(ws(url, `/agents/board/main?_pk=${id}`))));
    for (const client of [ann!, bob!]) expect(await client.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "board" });
    ann!.socket.send(JSON.stringify({ type: "dokit_presence", watch: true }));
    // Presence shows each connection's public id (a one-way hash of its `_pk`), never the `_pk`.
    const publicId = (id: string) => createHash("sha256").update(`dokit public id\u0000${id}`).digest().subarray(0, 16).toString("base64url");
    expect(await ann!.nextJSON()).toEqual({ type: "dokit_presence", you: publicId("ann"), all: [] });
    bob!.socket.send(JSON.stringify({ type: "dokit_presence", value: { name: "Bob", x: 1, y: 2 }, watch: false }));
    expect(await ann!.nextJSON()).toEqual({ type: "dokit_presence", set: [[publicId("bob"), { name: "Bob", x: 1, y: 2 }]] });
    bob!.socket.send(JSON.stringify({ type: "dokit_presence", value: { x: 1 } }));
    expect(await bob!.nextJSON()).toEqual({ type: "dokit_error", code: "PRESENCE_REJECTED", error: "Presence value rejected" });
    for (const client of [ann!, bob!]) client.socket.close();
  }, 120_000);

  it("docs/callables.md: say() reaches every other connection", async () => {
    const url = await serve("callables");
    const [caller, other] = await Promise.all([open(ws(url, "/agents/room/r")), open(ws(url, "/agents/room/r"))]);
    for (const client of [caller, other]) await client.nextJSON();
    caller.socket.send(JSON.stringify({ type: "rpc", id: "1", method: "say", args: ["hello"] }));
    expect(await caller.nextJSON()).toMatchObject({ type: "rpc", id: "1", success: true, done: true });
    expect(await other.next()).toBe("hello");
    for (const client of [caller, other]) client.socket.close();
  }, 120_000);

  it("docs/lifecycle.md, docs/observability.md, docs/schedule.md: the object answers HTTP and WebSockets", async () => {
    for (const example of ["lifecycle", "observability", "schedule"]) {
      const url = await serve(example);
      const socket = await open(ws(url, "/agents/room/r1"));
      expect(await socket.nextJSON(), example).toMatchObject({ type: "cf_agent_identity", agent: "room", name: "r1" });
      socket.socket.close();
      if (example === "lifecycle") expect(await (await fetch(new URL("/agents/room/r1", url))).text()).toBe("room r1");
    }
  }, 120_000);

  it("docs/queue.md: an order is stored and accepted", async () => {
    const url = await serve("queue");
    const response = await fetch(url, { method: "POST", body: "two pizzas" });
    expect([response.status, await response.text()]).toEqual([202, "accepted"]);
  }, 120_000);

  it("docs/streams.md: the build log is served as SSE, and read over a WebSocket", async () => {
    const url = await serve("streams");
    const built = await fetch(new URL("/agents/reports/main/build", url), { method: "POST" });
    expect([built.status, await built.text()]).toEqual([201, "built"]);
    const sse = await fetch(new URL("/agents/reports/main/log", url));
    expect(sse.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const steps = ["install", "compile", "test"].map((step, seq) => `id: ${seq}\ndata: {"step":"${step}","ok":true}\n\n`).join("");
    expect(await sse.text()).toBe(`${steps}event: up-to-date\ndata: {}\n\nevent: done\ndata: {}\n\n`);
    const socket = await open(ws(url, "/agents/reports/main"));
    expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "reports" });
    socket.socket.send(JSON.stringify({ type: "dokit_stream_read", stream: "build", from: 2 }));
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream", stream: "build", chunks: [{ seq: 2, chunk: { step: "test", ok: true } }] });
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_up_to_date", stream: "build", cursor: 3, token: expect.any(String) });
    expect(await socket.nextJSON()).toEqual({ type: "dokit_stream_end", stream: "build", state: "completed", cursor: 3 });
    socket.socket.close();
  }, 120_000);

  it("docs/tasks.md: a signup confirmed before it waits completes, and wait() answers with the settled run", async () => {
    const url = await serve("tasks");
    const receipt = (await (await fetch(new URL("/signup", url), { method: "POST", body: "ann@example.com" })).json()) as { runId: string };
    expect(receipt).toMatchObject({ definition: "signup@v1", accepted: true, state: "pending" });
    expect(await (await fetch(new URL(`/confirm/${receipt.runId}`, url), { method: "POST" })).json()).toBe(true);
    const outcome = await (await fetch(new URL(`/outcome/${receipt.runId}`, url))).json();
    expect(outcome).toMatchObject({ runId: receipt.runId, state: "completed", result: { id: 1 } });
  }, 120_000);

  it("docs/inspector.md: the inspector page is served on loopback", async () => {
    const url = await serve("inspector");
    const response = await fetch(new URL("/agents/board/b1/__dokit", url));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  }, 120_000);

  it("docs/routing.md: the object sees the user the Worker routed with, and DO RPC counts connections", async () => {
    const url = await serve("routing");
    const socket = await open(ws(url, "/agents/counter/main"));
    expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity" });
    expect(await socket.next()).toBe("hello guest");
    expect(await (await fetch(new URL("/connections", url))).json()).toBe(1);
    socket.socket.close();
  }, 120_000);

  it("docs/mcp.md: the add tool stores the total and names the routed user", async () => {
    const url = await serve("mcp");
    const endpoint = new URL("/agents/counter/c1/mcp", url);
    const headers = { accept: "application/json, text/event-stream", "content-type": "application/json", "x-user": "ada" };
    const rpc = (body: object, session?: string) =>
      fetch(endpoint, { method: "POST", headers: { ...headers, ...(session && { "mcp-session-id": session }) }, body: JSON.stringify({ jsonrpc: "2.0", ...body }) });
    const init = await rpc({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "docs", version: "1" } } });
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('"name":"counter"');
    const session = init.headers.get("mcp-session-id") ?? undefined;
    expect(session).toBeTruthy();
    expect((await rpc({ method: "notifications/initialized" }, session)).status).toBe(202);
    const call = await rpc({ id: 2, method: "tools/call", params: { name: "add", arguments: { a: 2 } } }, session);
    expect(await call.text()).toContain("ada: total 2");
  }, 120_000);

  it("docs/mcp-client.md: a connection gets the (empty) list of MCP servers", async () => {
    const url = await serve("mcp-client");
    const socket = await open(ws(url, "/agents/assistant/ada"));
    expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "assistant" });
    expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_mcp_servers", mcp: { servers: {}, tools: [] } });
    socket.socket.close();
  }, 120_000);

  it("docs/rooms.md: two clients on the room's shards receive a client's and the Worker's publishes, the publisher its ack", async () => {
    const url = await serve("rooms");
    /** @returns a client of the lobby, after its welcome, and a way to take its next frame of a type (the ack and the message may come in either order) */
    const join = async (id: string) => {
      const client = await open(ws(url, `/chat/lobby?_pk=${id}`));
      const unread: { type: string }[] = [];
      const next = async (type: string) => {
        for (;;) {
          const index = unread.findIndex((frame) => frame.type === type);
          if (index !== -1) return unread.splice(index, 1)[0]!;
          unread.push((await client.nextJSON()) as { type: string });
        }
      };
      expect(await next("dokit_room_welcome")).toMatchObject({ room: "lobby", shard: expect.any(Number) });
      return { ...client, next };
    };
    const [ann, bob] = [await join("ann"), await join("bob")];
    ann.socket.send(JSON.stringify({ type: "dokit_room_publish", id: "m1", data: { text: "hi" } }));
    for (const client of [ann, bob]) expect(await client.next("dokit_room")).toMatchObject({ seq: 1, data: { text: "hi" } });
    expect(await ann.next("dokit_room_ack")).toEqual({ type: "dokit_room_ack", id: "m1", seq: 1 });
    const posted = await fetch(new URL("/chat/lobby", url), { method: "POST", body: JSON.stringify({ text: "from the Worker" }) });
    expect(await posted.json()).toEqual({ seq: 2 });
    for (const client of [ann, bob]) expect(await client.next("dokit_room")).toMatchObject({ seq: 2, data: { text: "from the Worker" } });
    for (const client of [ann, bob]) client.socket.close();
  }, 120_000);

  it("docs/yjs.md: the Node editor syncs through the object, stores its line and exits", async () => {
    const url = await serve("yjs");
    const editor = projects.get("yjs")!.get("editor.ts")!;
    expect(editor).toContain('"ws://localhost:8787/agents/notes"');
    writeFileSync(join(dir, "yjs/editor.run.ts"), editor.replace("ws://localhost:8787", `ws://${url.host}`));
    const run = () => promisify(execFile)(process.execPath, [join(dir, "yjs/editor.run.ts")], { cwd: join(dir, "yjs"), timeout: 30_000 });
    expect(await run()).toEqual({ stdout: 'body: "a line from Node\\n"\n', stderr: "" });
    // The second run's editor starts from the object's stored document.
    expect((await run()).stdout).toBe('body: "a line from Node\\na line from Node\\n"\n');
  }, 120_000);

  it("docs/yjs.md: the Yjs path answers with sync step 1 in binary, the object's own URL with the JSON protocol", async () => {
    const url = await serve("yjs");
    const editor = new WebSocket(ws(url, "/agents/notes/team/yjs"));
    editor.binaryType = "arraybuffer";
    const first = await new Promise<unknown>((resolve, reject) => (editor.addEventListener("message", (event) => resolve(event.data)), editor.addEventListener("error", reject)));
    expect(first).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(first as ArrayBuffer).subarray(0, 2)]).toEqual([0, 0]); // [sync, step 1]
    editor.close();
    const json = await open(ws(url, "/agents/notes/team"));
    expect(await json.nextJSON()).toMatchObject({ type: "cf_agent_identity", agent: "notes", name: "team" });
    expect(await json.nextJSON()).toEqual({ type: "cf_agent_state", state: { title: "Untitled" } });
    json.socket.close();
  }, 120_000);
});
