// Scenario objects of yjs.test.ts: a Yjs document beside the JSON protocol on one object.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../src/lifecycle";
import { State } from "../src/state";
import { WebSockets } from "../src/websockets";
import { YjsDocument } from "../src/yjs";
import { evictRoute } from "./evict.route";

declare global {
  interface Env {
    YjsNotes: DurableObjectNamespace<YjsNotes>;
    YjsParty: DurableObjectNamespace<YjsParty>;
  }
}

/**
 * A shared text `body` (Yjs, at `…/yjs`) and a JSON state `{ title }` (the object's own URL).
 * `?mode=view` makes a Yjs connection readonly. Test routes below the object's URL:
 * `GET …/text` (the body as the server reads it), `POST …/edit` (the request body appended on the
 * server), `POST …/fill?mb=` (that many MiB of text inserted on the server), `GET …/size`
 * (`storedSize()` and the body's length), `GET …/changes` (how many times `onChange` ran, and the
 * body it saw last), `POST …/abort` (`ctx.abort()`).
 */
export class YjsNotes extends DurableObject<Env> {
  changes = 0;
  lastSeen = "";
  readonly notes = new State<{ title: string }>({ initialState: { title: "notes" } });
  readonly doc: YjsDocument = new YjsDocument({
    readonly: (_connection, ctx) => new URL(ctx.request.url).searchParams.get("mode") === "view",
    compactAfter: { updates: 20 },
    changeDelayMs: 50,
    onChange: (doc) => {
      this.changes++;
      this.lastSeen = doc.getText("body").toString();
    },
  });
  readonly webSockets: WebSockets = new WebSockets({ state: this.notes, yjs: this.doc });
  readonly lifecycle = Lifecycle.install(this).use(this.notes).use(this.webSockets);

  async onRequest(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const action = url.pathname.split("/").pop();
    const body = this.doc.getText("body");
    if (action === "text") return new Response(body.toString());
    if (action === "edit") {
      const text = await request.text();
      this.doc.transact(() => body.insert(body.length, text));
      return new Response("ok");
    }
    if (action === "fill") {
      const chunk = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,;:\n".repeat(1024 * 16).slice(0, 1024 * 1024);
      const mb = Number(url.searchParams.get("mb") ?? "1");
      this.doc.transact(() => body.insert(body.length, chunk.repeat(mb)));
      return new Response("ok");
    }
    if (action === "size") return Response.json({ ...this.doc.storedSize(), length: body.length });
    if (action === "changes") return Response.json({ changes: this.changes, lastSeen: this.lastSeen });
    if (action === "abort") this.ctx.abort("test: abort");
    return new Response("no route", { status: 404 });
  }
}

/**
 * A Yjs document on the object's own URL (`path: "/"`), the form y-partyserver's provider builds
 * (`/parties/<party>/<room>`), which the Worker routes with `routeAgentRequest(…, { prefix: "parties" })`.
 */
export class YjsParty extends DurableObject<Env> {
  readonly doc: YjsDocument = new YjsDocument({ path: "/" });
  readonly webSockets: WebSockets = new WebSockets({ yjs: this.doc });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  async onRequest(): Promise<Response> {
    return new Response(this.doc.getText("body").toString());
  }
}

/** Test-only: `POST /evict-yjs/<name>` evicts that YjsNotes (evict.route.ts). */
export function yjsEvictRoute(request: Request, env: Env): Promise<Response | undefined> | undefined {
  const url = new URL(request.url);
  if (!url.pathname.startsWith("/evict-yjs/")) return undefined;
  url.pathname = url.pathname.replace("/evict-yjs/", "/evict/");
  return evictRoute(new Request(url, request), env.YjsNotes);
}
