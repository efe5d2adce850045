import type { Doc } from "./doc";

declare global {
  interface Env {
    Doc: DurableObjectNamespace<Doc>;
  }
}
