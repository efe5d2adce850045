import type { Sleeper, Source, Streamer, Ticker } from "./objects";

declare global {
  interface Env {
    SLEEPER: DurableObjectNamespace<Sleeper>;
    TICKER: DurableObjectNamespace<Ticker>;
    STREAMER: DurableObjectNamespace<Streamer>;
    SOURCE: DurableObjectNamespace<Source>;
  }
  namespace Cloudflare {
    interface Env extends globalThis.Env {}
  }
}
