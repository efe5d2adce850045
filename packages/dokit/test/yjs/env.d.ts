import type { YjsCapped, YjsDoc, YjsUnserved } from "./objects";

declare global {
  interface Env {
    YJS_DOC: DurableObjectNamespace<YjsDoc>;
    YJS_UNSERVED: DurableObjectNamespace<YjsUnserved>;
    YJS_CAPPED: DurableObjectNamespace<YjsCapped>;
  }
}
