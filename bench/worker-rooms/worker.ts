// The rooms bench worker (bench/rooms.ts):
//   /room/<b0|b10|b50|t4>/<room>?shards=<n>&_pk=<id>  a WebSocket routed by routeRoomRequest to one of
//                                                    the room's n shards (the class with that batch window;
//                                                    t4: 10 ms, and a sequencer 4 wide that delivers through relays)
//   /stats, /stats/reset                             the object-to-object calls counted so far (JSON)
//   /faults?rate=<0..1>                              fail that share of the counted calls from now on
//   /evict/<b…|t4|sequencer|tree-sequencer|relay>/<room>[/<index or relay path>]
//                                                    test-only: evicts a shard, a sequencer or a relay as hibernation does
//   /abort/…                                         the same, reset as a crash would (ctx.abort)
//   /single/<room>                                   a WebSocket to one plain dokit WebSockets object (the scale bench's baseline)
//   /blast/single/<room>  (POST, the data as body)   that object broadcasts the data, framed as a shard frames a message
//   /blast/single-loop/<room>                        the same, sent over getConnections() one by one, each id read (as a shard's delivery walks them)
//   /blast/single-stored/<room>                      the same broadcast after a SQLite write (as a shard stores its cursor before it sends)
//   /blast/room/<room>    (POST, the data as body)   publishToRoom to the room (sequencer ROOM_SEQUENCER, shards b10)
//   /pair?mode=<rpc|fetch>&calls=<n>&group=<g>       one object calls another n times; JSON: each group's mean ms per call
//   /inproc/…                                        the in-process measure: clients held by objects in workerd (inproc.ts)
import { publishToRoom, routeRoomRequest, shardName } from "dokit/rooms";
import { type BenchHolder, inprocRoute } from "./inproc";
import { resetStats, setFaultRate, stats } from "./objects";
import type { BenchPairCaller, BenchSingle } from "./scale";

export { BenchRelay, BenchSequencer, BenchShardB0, BenchShardB10, BenchShardB50, BenchShardT4, BenchTreeSequencer } from "./objects";
export { BenchPairCallee, BenchPairCaller, BenchSingle } from "./scale";
export { BenchHolder } from "./inproc";

type Abortable = DurableObjectStub & { benchAbort(): Promise<void> };
interface Env {
  ROOMS_B0: DurableObjectNamespace;
  ROOMS_B10: DurableObjectNamespace;
  ROOMS_B50: DurableObjectNamespace;
  ROOM_SEQUENCER: DurableObjectNamespace;
  ROOMS_T4: DurableObjectNamespace;
  TREE_SEQUENCER: DurableObjectNamespace;
  ROOM_RELAY: DurableObjectNamespace;
  SINGLE: DurableObjectNamespace<BenchSingle>;
  PAIR_CALLER: DurableObjectNamespace<BenchPairCaller>;
  PAIR_CALLEE: DurableObjectNamespace;
  INPROC_HOLDER: DurableObjectNamespace<BenchHolder>;
}

const BINDINGS = { b0: "ROOMS_B0", b10: "ROOMS_B10", b50: "ROOMS_B50", t4: "ROOMS_T4" } as const;

// `workerd:unsafe` (compat flag unsafe_module) is loaded at run time: a computed specifier keeps it out of the build.
type Unsafe = { evict(stub: DurableObjectStub, options: { webSockets: "hibernate" | "close" }): Promise<void> };
const UNSAFE = ["workerd", "unsafe"].join(":");
const unsafe = async (): Promise<Unsafe> => ((await import(UNSAFE)) as { default: Unsafe }).default;

/** @returns the stub of a shard or the sequencer, addressed as the room addresses it (by name) */
function target(env: Env, kind: string, room: string, index: string | undefined): Abortable | undefined {
  if (kind === "sequencer") return env.ROOM_SEQUENCER.get(env.ROOM_SEQUENCER.idFromName(room)) as Abortable;
  if (kind === "tree-sequencer") return env.TREE_SEQUENCER.get(env.TREE_SEQUENCER.idFromName(room)) as Abortable;
  if (kind === "relay" && index !== undefined) return env.ROOM_RELAY.get(env.ROOM_RELAY.idFromName(`${room}~relay~${index}`)) as Abortable;
  const binding = BINDINGS[kind as keyof typeof BINDINGS];
  if (!binding || index === undefined) return undefined;
  const namespace = env[binding];
  return namespace.get(namespace.idFromName(shardName(room, Number(index)))) as Abortable;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const [, action, kind = "", room = "", index] = url.pathname.split("/");
    if (action === "stats") {
      if (kind === "reset") resetStats();
      return Response.json(stats());
    }
    if (action === "faults") {
      setFaultRate(Number(url.searchParams.get("rate") ?? 0));
      return new Response("ok");
    }
    if (action === "single") return env.SINGLE.get(env.SINGLE.idFromName(kind)).fetch(request);
    if (action === "blast") {
      const data = await request.text();
      if (kind === "single") return Response.json({ seq: await env.SINGLE.get(env.SINGLE.idFromName(room)).blast(data) });
      if (kind === "single-stored") return Response.json({ seq: await env.SINGLE.get(env.SINGLE.idFromName(room)).blastStored(data) });
      if (kind === "single-loop") return Response.json({ seq: await env.SINGLE.get(env.SINGLE.idFromName(room)).blastLoop(data) });
      if (kind === "room") return Response.json({ seq: await publishToRoom(env, room, JSON.parse(data)) });
      return new Response("no route", { status: 404 });
    }
    if (action === "inproc") return inprocRoute(request, env);
    if (action === "pair") {
      const mode = url.searchParams.get("mode") === "fetch" ? "fetch" : "rpc";
      const caller = env.PAIR_CALLER.get(env.PAIR_CALLER.idFromName("caller"));
      return Response.json(await caller.run(mode, Number(url.searchParams.get("calls") ?? 1000), Number(url.searchParams.get("group") ?? 100)));
    }
    if (action === "room") {
      const shards = BINDINGS[kind as keyof typeof BINDINGS];
      if (!shards || !room) return new Response("no route", { status: 404 });
      return routeRoomRequest(request, env, { shards, room, shardCount: Number(url.searchParams.get("shards") ?? 1) });
    }
    const stub = target(env, kind, room, index);
    if (!stub) return new Response("no route", { status: 404 });
    if (action === "evict") {
      // Refused when the object is not running: that is no failure of the run.
      const evicted = await (await unsafe()).evict(stub, { webSockets: "hibernate" }).then(() => true, () => false);
      return new Response(evicted ? "evicted" : "not running");
    }
    if (action === "abort") {
      // The reset's error is the point.
      await stub.benchAbort().catch(() => {});
      return new Response("reset");
    }
    return new Response("no route", { status: 404 });
  },
} satisfies ExportedHandler<Env>;
