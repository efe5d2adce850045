import "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
    // Types `exports.default` (from cloudflare:workers) as this Worker's own fetch.
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
