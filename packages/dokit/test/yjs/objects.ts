// Scenario objects of yjs.test.ts.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { WebSockets } from "../../src/websockets";
import { YjsDocument } from "../../src/yjs";

/** A document compacted after 5 updates; `?mode=view` connections are readonly. */
export class YjsDoc extends DurableObject<Env> {
  readonly doc: YjsDocument = new YjsDocument({
    compactAfter: { updates: 5 },
    readonly: (_connection, ctx) => new URL(ctx.request.url).searchParams.get("mode") === "view",
  });
  readonly webSockets: WebSockets = new WebSockets({ yjs: this.doc });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** Small bounds: 2 awareness clients per connection, 3 per document; updates of 4 KiB and 100 structs, a document of 150. */
export class YjsCapped extends DurableObject<Env> {
  readonly doc: YjsDocument = new YjsDocument({
    maxAwarenessClientsPerConnection: 2,
    maxAwarenessClients: 3,
    maxUpdateBytes: 4096,
    maxUpdateStructs: 100,
    maxDocumentStructs: 150,
  });
  readonly webSockets: WebSockets = new WebSockets({ yjs: this.doc });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** A YjsDocument not given to WebSockets: it cannot be served. */
export class YjsUnserved extends DurableObject<Env> {
  readonly doc: YjsDocument = new YjsDocument();
  readonly webSockets: WebSockets = new WebSockets();
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  /** @returns what `use(doc)` throws (as it would in the constructor), or `undefined` */
  useDoc(): unknown {
    try {
      this.lifecycle.use(this.doc);
      return undefined;
    } catch (error) {
      return error;
    }
  }
}
