import type { YjsDoc, YjsUnserved } from "./objects";

declare global {
  interface Env {
    YJS_DOC: DurableObjectNamespace<YjsDoc>;
    YJS_UNSERVED: DurableObjectNamespace<YjsUnserved>;
  }
}
