// Worker entry of the bench: identical routing for every implementation, so
// the figures differ only by what happens inside the Durable Object.
//   /room/{raw|dokit|ref}/{name}        WebSocket upgrade or plain request, forwarded to the object
//                                       (/room/observed/…: the dokit room with dokit/observability, bench/observability.ts;
//                                       /room/lean/…, /room/floor/…: the wake's lower bounds, worker-wake/lean.ts)
//   /evict/{raw|dokit|ref}/{name}       test-only: evicts the object the way hibernation does
//                                       (instance torn down, WebSockets kept open)
//   /room/{presence-raw|presence-dokit}/{name}  the presence rooms (presence.ts, bench/presence.ts)
//   /gc                                 test-only: a full garbage collection, when workerd runs with
//                                       --expose-gc (the memory measure, bench/lib/heap.ts)
//   /room/{hb-raw|hb-dokit|hb-swept}/{name}  the heartbeat rooms (heartbeat.ts, bench/heartbeat.ts)
//   /heartbeat-stats                    the heartbeat rooms' constructions so far, read in the Worker
//                                       without reaching any object (JSON)

import { objectNamed } from "./address";
import { heartbeatConstructions } from "./heartbeat";
import { PRESENCE_BINDINGS } from "./presence";

export { RawRoom } from "./raw";
export { DokitRoom } from "./dokit";
export { RefRoom } from "./ref";
export { ObservedRoom } from "./observed";
// The wake's lower bounds, for `node bench/run.ts --dokit-room=lean|floor` (bench/README.md).
export { FloorRoom, LeanRoom } from "../worker-wake/lean";
export { DokitHeartbeatRoom, DokitSweptRoom, RawHeartbeatRoom } from "./heartbeat";
export { DokitPresenceRoom, RawPresenceRoom } from "./presence";

interface Env {
  RAW: DurableObjectNamespace;
  DOKIT: DurableObjectNamespace;
  REF: DurableObjectNamespace;
  OBSERVED: DurableObjectNamespace;
  LEAN: DurableObjectNamespace;
  FLOOR: DurableObjectNamespace;
  HB_RAW: DurableObjectNamespace;
  HB_DOKIT: DurableObjectNamespace;
  HB_SWEPT: DurableObjectNamespace;
  PRESENCE_RAW: DurableObjectNamespace;
  PRESENCE_DOKIT: DurableObjectNamespace;
}

// `workerd:unsafe` (compat flag unsafe_module) is loaded at run time: wrangler's
// bundler cannot resolve it, and a computed specifier keeps it out of the build.
type Unsafe = { evict(stub: DurableObjectStub, options: { webSockets: "hibernate" | "close" }): Promise<void> };
const UNSAFE = ["workerd", "unsafe"].join(":");
const unsafe = async (): Promise<Unsafe> => ((await import(UNSAFE)) as { default: Unsafe }).default;

/** Evicts an object the way hibernation does: the instance goes, storage and WebSockets stay. */
export async function evict(stub: DurableObjectStub): Promise<void> {
  await (await unsafe()).evict(stub, { webSockets: "hibernate" });
}

const BINDINGS = { raw: "RAW", dokit: "DOKIT", ref: "REF", observed: "OBSERVED", lean: "LEAN", floor: "FLOOR", "hb-raw": "HB_RAW", "hb-dokit": "HB_DOKIT", "hb-swept": "HB_SWEPT" } as const;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const [, action, kind, name] = new URL(request.url).pathname.split("/");
    if (action === "gc") {
      const gc = (globalThis as { gc?: () => void }).gc;
      if (!gc) return new Response("start workerd with --expose-gc (MINIFLARE_WORKERD_V8_FLAGS)", { status: 501 });
      gc();
      return new Response("collected");
    }
    if (action === "heartbeat-stats") return Response.json(heartbeatConstructions());
    const binding = BINDINGS[kind as keyof typeof BINDINGS] ?? PRESENCE_BINDINGS[kind ?? ""];
    if (!binding || !name) return new Response("no route", { status: 404 });
    // The reference needs `ctx.id.name` (it throws without it), so its room keeps the named id
    // and pays the local wrapper's write on each construction (bench/README.md, "How it runs").
    const stub = kind === "ref" ? env[binding].getByName(name) : objectNamed(env[binding], name);
    if (action === "room") return stub.fetch(request);
    if (action === "evict") {
      await evict(stub);
      return new Response("evicted");
    }
    return new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
