import type { Counter } from "./counter";

declare global {
  interface Env {
    Counter: DurableObjectNamespace<Counter>;
  }
}
