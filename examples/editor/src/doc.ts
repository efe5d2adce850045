import { DurableObject } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { WebSockets } from "dokit/websockets";
import { YjsDocument } from "dokit/yjs";
import { TEXT } from "./api";

/**
 * One shared document: the text every editor of `/agents/doc/<name>/yjs` edits, with the
 * y-protocols wire y-websocket's provider speaks. Each update is in SQLite before anyone
 * hears of it; the editors' names, colours and cursors are awareness, relayed as they change.
 */
export class Doc extends DurableObject<Env> {
  readonly document = new YjsDocument();
  readonly webSockets: WebSockets = new WebSockets({ yjs: this.document });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets)
    // The live inspector at /agents/doc/{name}/__dokit (localhost only: docs/inspector.md): the
    // connections, the document's stored size and the editors with their names.
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, yjs: this.document }));

  /** DO RPC: the document's text as the object holds it (the Worker's `GET /text`). */
  async text(): Promise<string> {
    await this.lifecycle.start();
    return this.document.getText(TEXT).toString();
  }
}
