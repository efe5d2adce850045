// Scenario objects of yjs.test.ts: a Yjs document shown by the Inspector.
import { DurableObject } from "cloudflare:workers";
import { Inspector } from "../../src/inspector";
import { Lifecycle } from "../../src/lifecycle";
import { WebSockets } from "../../src/websockets";
import { YjsDocument } from "../../src/yjs";

/** A Yjs document (compacted after 3 updates) beside JSON-protocol connections, with the Inspector showing both. */
export class YjsInspectedRoom extends DurableObject<Env> {
  readonly doc: YjsDocument = new YjsDocument({ compactAfter: { updates: 3 } });
  readonly webSockets: WebSockets = new WebSockets({ yjs: this.doc });
  readonly inspector = new Inspector({ enabled: true, webSockets: this.webSockets, yjs: this.doc });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets).use(this.inspector);
}
