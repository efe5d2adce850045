import type { Board } from "./board";

declare global {
  interface Env {
    Board: DurableObjectNamespace<Board>;
    /** The demo's editor token (wrangler.jsonc `vars`; a secret in production). */
    BOARD_EDITOR_TOKEN: string;
  }
}
