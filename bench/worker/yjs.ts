// The yjs measure's worker (bench/yjs.ts): one Yjs document per object, served two ways behind
// identical routing, so the figures differ only by what happens inside the object.
//   /yjs/{dokit|party}/{name}           WebSocket upgrade: the y-protocols wire
//   /yjs/{dokit|party}/{name}/fill?mb=  POST: that many MiB of text appended to `body` on the server, then stored
//   /yjs/{dokit|party}/{name}/size      GET: { length, bytes, databaseSize, instance } (bytes: the document's stored bytes)
//   /yjs/{dokit|party}/{name}/compact   POST: dokit compacts; y-partyserver runs its onSave
//   /yjs/{dokit|party}/{name}/abort     POST: ctx.abort() (the durability run)
//   /yjs-evict/{dokit|party}/{name}     test-only: evicts the object the way hibernation does
//   /yjs/raw/{mode}-{name}              WebSocket upgrade: a hand-written reference room (yjs-raw.ts, for bench/yjs-parts.ts)
// dokit: `YjsDocument` at its defaults (every update appended to SQLite before it is applied and relayed).
// y-partyserver: `YServer` with the onLoad/onSave persistence of its README, writing the state to the
// object's own storage (debounced by its defaults: 2 s, at most 10 s), hibernating.
import { DurableObject } from "cloudflare:workers";
import { YServer } from "y-partyserver";
import * as Y from "yjs";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";
import { YjsDocument } from "dokit/yjs";

export { RawYjsRoom } from "./yjs-raw";

interface Env {
  YJS_DOKIT: DurableObjectNamespace;
  YJS_PARTY: DurableObjectNamespace;
  YJS_RAW: DurableObjectNamespace;
}

const CHUNK = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,;:\n".repeat(1024 * 16).slice(0, 1024 * 1024);
/** y-partyserver's README stores one value; SQLite-backed storage caps a value near 2 MB, so the state goes in parts of 1 MiB. */
const PART = 1024 * 1024;

/** The routes both rooms answer, given how each reads, stores and compacts its document. */
async function route(
  request: Request,
  ctx: DurableObjectState,
  instance: string,
  room: { doc: () => Y.Doc; bytes: () => number | Promise<number>; store: () => void | Promise<void> },
): Promise<Response> {
  const url = new URL(request.url);
  const action = url.pathname.split("/").pop();
  if (action === "fill") {
    const doc = room.doc();
    const mb = Number(url.searchParams.get("mb") ?? "1");
    doc.transact(() => {
      const body = doc.getText("body");
      for (let i = 0; i < mb; i++) body.insert(body.length, CHUNK);
    });
    await room.store();
    return new Response("ok");
  }
  if (action === "size") {
    const length = room.doc().getText("body").length;
    return Response.json({ length, bytes: await room.bytes(), databaseSize: ctx.storage.sql.databaseSize, instance });
  }
  if (action === "compact") {
    await room.store();
    return new Response("ok");
  }
  if (action === "abort") ctx.abort("bench: abort");
  return new Response("no route", { status: 404 });
}

export class DokitYjsRoom extends DurableObject<Env> {
  readonly #instance = crypto.randomUUID();
  readonly doc: YjsDocument = new YjsDocument({ path: "/" });
  readonly webSockets: WebSockets = new WebSockets({ yjs: this.doc });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  onRequest(request: Request): Promise<Response> {
    return route(request, this.ctx, this.#instance, {
      doc: () => this.doc.doc,
      bytes: () => {
        const { snapshotBytes, updateBytes } = this.doc.storedSize();
        return snapshotBytes + updateBytes;
      },
      store: () => this.doc.compact(),
    });
  }
}

export class PartyYjsRoom extends YServer<Env> {
  static options = { hibernate: true };
  readonly #instance = crypto.randomUUID();

  async onLoad(): Promise<void> {
    const parts = await this.ctx.storage.get<number>("doc:parts");
    if (!parts) return;
    const keys = Array.from({ length: parts }, (_, i) => `doc:${i}`);
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < keys.length; i += 128) {
      const got = await this.ctx.storage.get<Uint8Array>(keys.slice(i, i + 128));
      for (const key of keys.slice(i, i + 128)) chunks.push(got.get(key) as Uint8Array);
    }
    const state = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const chunk of chunks) (state.set(chunk, at), (at += chunk.byteLength));
    Y.applyUpdate(this.document, state);
  }

  async onSave(): Promise<void> {
    const state = Y.encodeStateAsUpdate(this.document);
    const entries: Record<string, unknown> = {};
    const parts = Math.max(1, Math.ceil(state.byteLength / PART));
    for (let i = 0; i < parts; i++) entries[`doc:${i}`] = state.slice(i * PART, (i + 1) * PART); // a copy: a view would store its whole buffer
    const before = (await this.ctx.storage.get<number>("doc:parts")) ?? 0;
    for (let i = 0; i < parts; i += 128) {
      await this.ctx.storage.put(Object.fromEntries(Object.entries(entries).slice(i, i + 128)));
    }
    await this.ctx.storage.put({ "doc:parts": parts, "doc:bytes": state.byteLength });
    if (before > parts) await this.ctx.storage.delete(Array.from({ length: before - parts }, (_, i) => `doc:${parts + i}`));
  }

  onRequest(request: Request): Promise<Response> {
    return route(request, this.ctx, this.#instance, {
      doc: () => this.document,
      bytes: async () => (await this.ctx.storage.get<number>("doc:bytes")) ?? 0,
      store: () => this.onSave(),
    });
  }
}

// `workerd:unsafe` (compat flag unsafe_module) is loaded at run time, out of the bundle.
type Unsafe = { evict(stub: DurableObjectStub, options: { webSockets: "hibernate" | "close" }): Promise<void> };
const UNSAFE = ["workerd", "unsafe"].join(":");

const BINDINGS = { dokit: "YJS_DOKIT", party: "YJS_PARTY", raw: "YJS_RAW" } as const;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, action, kind, name, sub] = url.pathname.split("/");
    const binding = BINDINGS[kind as keyof typeof BINDINGS];
    if (!binding || !name) return new Response("no route", { status: 404 });
    // Both by name: partyserver needs `ctx.id.name`, so dokit's room is addressed the same way.
    const stub = env[binding].getByName(name);
    if (action === "yjs-evict") {
      await ((await import(UNSAFE)) as { default: Unsafe }).default.evict(stub, { webSockets: "hibernate" });
      return new Response("evicted");
    }
    if (action !== "yjs") return new Response("no route", { status: 404 });
    // Each room sees its document on "/" and its routes below it.
    const inner = new URL(`/${sub ?? ""}${url.search}`, url);
    const forwarded = new Request(inner, request);
    forwarded.headers.set("x-partykit-room", name);
    return stub.fetch(forwarded);
  },
} satisfies ExportedHandler<Env>;
