// `pnpm bench`: starts the bench worker on loopback and measures the raw
// hibernation-API room, the dokit room and the reference (npm agents) room in
// ONE run, interleaved round by round (every order of the three in turn, lib/order.ts) so
// machine drift and the rooms' effect on each other cancel. Then the bundle sizes and the jobs measure.
// Writes each measure's result file (lib/results.ts; a --quick run to bench/results/quick/) and
// bench/results/latest.json, then renders bench/RESULTS.md from the result files (render.ts).
//
//   node bench/run.ts [--quick] [--verbose] [--via-proxy] [--observability] [--deflate] [--no-pin] [--mcp]
//                     [--only=echo,rpc,saturation,open,scale,memory,fanout,state,connect,wake,startup,events,heartbeat,deadlink,mcp,presence,rooms,rooms-scale,rooms-inproc,bundle,jobs,streams,tasks,yjs]
//                     [--rooms-clients=2000] [--rooms-shards=8] [--rooms-publishers=16] [--rooms-messages=20] [--rooms-faults=0.05]
//                     [--rooms-strike-ms=500] [--rooms-fanout=tree|flat] [--rooms-no-cost]  (bench/rooms.ts)
//                     [--scale-sizes=1000,5000,10000,20000,30000,40000] [--scale-shards=8,16] [--scale-publishes=10]
//                     [--scale-bytes=1024] [--scale-procs=2] [--scale-parallel=64] [--scale-one-max=32768] [--scale-calls=2000]
//                     [--scale-svg=bench/rooms-scale.svg] [--scale-loop]  (bench/rooms-scale.ts; only with --only=rooms-scale)
//                     [--inproc-sizes=10000,20000,30000,40000] [--inproc-shards=0,8,16] [--inproc-publishes=10] [--inproc-one-max=32768]
//                     [--inproc-bytes=1024] [--inproc-holders=16] [--inproc-parallel=16] [--inproc-gap=300] [--inproc-paired]  (bench/rooms-inproc.ts; only with --only=rooms-inproc)
//                     [--heartbeat-connections=4000] [--heartbeat-window=70] [--heartbeat-interval=30] [--deadlink-runs=12]
//                     [--presence-watchers=1000] [--presence-connections=200] [--presence-rate=60] [--presence-seconds=10]  (bench/presence.ts)
//                     [--dokit-room=lean|floor]  (the dokit column served by a lower bound; bench/README.md)
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { bundleReport } from "./bundle.ts";
import { deadLink, heartbeatIdle } from "./heartbeat.ts";
import { arg } from "./lib/cli.ts";
import { presenceBench, presenceSettings } from "./presence.ts";
import { type Client, closeAll, COMPRESSION, connect, connectMany, evictRoom, EXTENSION, fanOut, roomUrl, roundTrip } from "./lib/client.ts";
import { closedLoop, pinWorkerd, sleep, workerdPids } from "./lib/load.ts";
import { openHeapReader } from "./lib/heap.ts";
import { roundOrder } from "./lib/order.ts";
import { startBenchWorker } from "./lib/worker.ts";
import { mcpExported, mcpMeasures } from "./lib/mcp.ts";
import { type Figure, median, pairedRatio, quantile, ratio, table } from "./lib/stats.ts";
import { commandLine, fromFigure, IMPL_COLUMNS, recordRun, type RunResult } from "./lib/results.ts";
import { bundleRun } from "./bundle.ts";
import { jobsRun } from "./jobs.ts";
import { sessionsRun } from "./sessions.ts";
import { streamsRun } from "./streams.ts";
import { tasksRun } from "./tasks.ts";
import { yjsRun } from "./yjs.ts";

// workerd logs a harmless "tail session was canceled" error for many closed sockets; --verbose shows wrangler's logs.
process.env.WRANGLER_LOG ??= process.argv.includes("--verbose") ? "info" : "none";
process.env.WRANGLER_SEND_METRICS ??= "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
// wrangler 4.164 turns local observability on by default: it records every WebSocket message in the
// same workerd process and caps all three rooms near 7k msg/s. Off unless --observability.
if (!process.argv.includes("--observability")) process.env.X_LOCAL_OBSERVABILITY ??= "false";

const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const VIA_PROXY = args.includes("--via-proxy");
const NO_PIN = args.includes("--no-pin");
/** How the processes were placed on CPUs for the saturation measures (see pinWorkerd). */
let pinned = "not pinned";
const FORCE_MCP = args.includes("--mcp"); // serve and measure MCP even before dokit/mcp is exported
/**
 * `--dokit-room=lean|floor`: the dokit column is served by one of the wake's lower bounds
 * (worker-wake/lean.ts) instead of the dokit room, so the measures show what dokit's wiring costs
 * over them in the same conditions. Those rooms answer only `e:`, `b:`, `i:` and a plain GET, so only
 * the measures below run (`open` unless `--only` names others), and the results go to their own file.
 */
const DOKIT_ROOM = args.find((a) => a.startsWith("--dokit-room="))?.slice(13);
const LOWER_BOUND_MEASURES = ["echo", "open", "wake", "fanout", "scale", "memory"];
if (DOKIT_ROOM !== undefined && DOKIT_ROOM !== "lean" && DOKIT_ROOM !== "floor") throw new Error(`--dokit-room=${DOKIT_ROOM}: lean or floor`);
const ONLY = args.find((a) => a.startsWith("--only="))?.slice(7).split(",") ?? (DOKIT_ROOM ? ["open"] : undefined);
if (DOKIT_ROOM && ONLY?.some((name) => !LOWER_BOUND_MEASURES.includes(name))) {
  throw new Error(`--dokit-room runs only ${LOWER_BOUND_MEASURES.join(", ")}`);
}
/** Measures that run only when `--only` names them (minutes long, tens of thousands of sockets). */
const ON_REQUEST = ["rooms-scale", "rooms-inproc"];
const enabled = (name: string) => (ONLY ? ONLY.includes(name) : !ON_REQUEST.includes(name));
/** The heartbeat measures' settings (bench/heartbeat.ts; the sweep's timeout is worker/heartbeat.ts's SWEEP_TIMEOUT_MS). */
const HEARTBEAT = {
  connections: Number(arg("heartbeat-connections", QUICK ? "1000" : "4000")),
  windowS: Number(arg("heartbeat-window", QUICK ? "25" : "70")),
  intervalS: Number(arg("heartbeat-interval", QUICK ? "10" : "30")),
};
const DEAD_LINK = { runs: Number(arg("deadlink-runs", QUICK ? "3" : "12")), intervalMs: 2_000, timeoutMs: 1_000, sweepPingMs: 1_000, sweepTimeoutMs: 3_000 };

const IMPLS = ["raw", "dokit", "ref"] as const;
type Impl = (typeof IMPLS)[number];
const RUN = Date.now().toString(36);
const scale = (n: number) => (QUICK ? Math.max(3, Math.ceil(n / 5)) : n);

/** The implementations' order in each round: all six orders in turn (lib/order.ts). */
const orderOf = roundOrder(IMPLS);

/**
 * Runs `body` for every implementation, `rounds` times, in the round's order (each of the six in
 * turn): over six rounds each implementation runs twice in each position and right after each
 * other one equally often. Measures take their counted rounds in multiples of six.
 */
async function interleave(rounds: number, body: (impl: Impl, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const impl of orderOf(round)) await body(impl, round);
  }
}

/** The path segment of an implementation's room (the dokit column's may be a lower bound's). */
const roomOf = (impl: Impl): string => (impl === "dokit" && DOKIT_ROOM) || impl;
/** The WebSocket URL of an implementation's room (`roomUrl` with {@link roomOf}). */
const urlOf = (base: URL, impl: Impl, room: string, pk?: string): string => roomUrl(base, roomOf(impl), room, pk);
/** Evicts an implementation's room (`evictRoom` with {@link roomOf}). */
const evict = (base: URL, impl: Impl, room: string): Promise<void> => evictRoom(base, roomOf(impl), room);

const byImpl = <T>(make: () => T): Record<Impl, T> => ({ raw: make(), dokit: make(), ref: make() });
const values = (f: (impl: Impl) => number) => Object.fromEntries(IMPLS.map((i) => [i, f(i)]));
const counts = (samples: Record<Impl, number[]>) => Object.fromEntries(IMPLS.map((i) => [i, samples[i].length]));

const figures: Figure[] = [];
/** Where each measure's figures begin in {@link figures}: [its `--only` name, index], in run order (a measure may run twice). */
const marks: [string, number][] = [];
/** Marks that the figures pushed from now on are `measure`'s, for its result file (lib/results.ts). */
const mark = (measure: string): void => void marks.push([measure, figures.length]);
/** @returns each measure's figures of this run, by its `--only` name */
function figuresByMeasure(): Map<string, Figure[]> {
  const by = new Map<string, Figure[]>();
  marks.forEach(([measure, from], i) => by.set(measure, [...(by.get(measure) ?? []), ...figures.slice(from, marks[i + 1]?.[1] ?? figures.length)]));
  return by;
}
function percentiles(measure: string, samples: Record<Impl, number[]>, target?: number): void {
  figures.push({ measure, stat: "p50", unit: "ms", values: values((i) => quantile(samples[i], 0.5)), samples: counts(samples), target });
  figures.push({ measure, stat: "p99", unit: "ms", values: values((i) => quantile(samples[i], 0.99)), samples: counts(samples) });
}
function medianOf(measure: string, samples: Record<Impl, number[]>, target?: number, stat = "median"): void {
  figures.push({ measure, stat, unit: "ms", values: values((i) => median(samples[i])), samples: counts(samples), target });
}
function log(message: string): void {
  process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(0)}s] ${message}\n`);
}

// ------------------------------------------------------------------ measures

/** Sequential request/reply over one connection per implementation. */
async function sequential(base: URL, name: string, total: number, frame: (n: number) => string, match: (n: number) => (d: string) => boolean, target: number): Promise<void> {
  const clients = {} as Record<Impl, Client>;
  for (const impl of IMPLS) clients[impl] = await connect(urlOf(base, impl, `${name}-${RUN}`));
  const samples = byImpl<number[]>(() => []);
  // Small blocks, so the implementations alternate often and load bursts hit all three alike.
  const block = 10;
  let n = 0;
  // Warm-up (10 blocks, not recorded), then total/block interleaved blocks.
  await interleave(10, async (impl) => {
    for (let i = 0; i < block; i++, n++) await roundTrip(clients[impl], frame(n), match(n));
  });
  await interleave(Math.ceil(total / block), async (impl) => {
    for (let i = 0; i < block; i++, n++) samples[impl].push(await roundTrip(clients[impl], frame(n), match(n)));
  });
  await closeAll(Object.values(clients));
  percentiles(`${name} round trip`, samples, target);
}

async function echo(base: URL): Promise<void> {
  await sequential(base, "echo", scale(2_040), (n) => `e:${n}`, (n) => (d) => d === `e:${n}`, 1.1);
}

async function rpc(base: URL): Promise<void> {
  await sequential(
    base,
    "rpc",
    scale(2_040),
    (n) => `{"type":"rpc","id":"${n}","method":"echo","args":[${n}]}`,
    (n) => (d) => d.includes(`"id":"${n}"`),
    1.1,
  );
}

/** Opens `size` connections per implementation (one room each). */
async function rooms(base: URL, name: string, size: number): Promise<Record<Impl, Client[]>> {
  const out = {} as Record<Impl, Client[]>;
  for (const impl of IMPLS) out[impl] = await connectMany((i) => urlOf(base, impl, `${name}-${RUN}`, `c${i}`), size);
  return out;
}

async function closeRooms(all: Record<Impl, Client[]>): Promise<void> {
  for (const impl of IMPLS) await closeAll(all[impl]);
}

async function broadcast(base: URL, size: number, rounds: number): Promise<void> {
  const all = await rooms(base, `fan${size}`, size);
  const samples = byImpl<number[]>(() => []);
  const once = async (impl: Impl, tag: string) => {
    const clients = all[impl];
    const message = `b:${tag}`;
    return fanOut(clients, () => clients[0]!.ws.send(message), (d) => d === message);
  };
  await interleave(2, (impl, r) => once(impl, `warm${r}`).then(() => {}));
  await interleave(rounds, async (impl, r) => void samples[impl].push(await once(impl, `${r}`)));
  await closeRooms(all);
  medianOf(`broadcast fan-out to ${size}`, samples, 1.1);
}

async function stateFanOut(base: URL, others: number, rounds: number): Promise<void> {
  const all = await rooms(base, `state${others}`, others + 1);
  const samples = byImpl<number[]>(() => []);
  let count = 1;
  const once = async (impl: Impl) => {
    const [sender, ...rest] = all[impl];
    const frame = JSON.stringify({ type: "cf_agent_state", state: { count: count++ } });
    return fanOut(rest, () => sender!.ws.send(frame), (d) => d === frame);
  };
  await interleave(2, (impl) => once(impl).then(() => {}));
  await interleave(rounds, async (impl) => void samples[impl].push(await once(impl)));
  await closeRooms(all);
  medianOf(`state change to ${others} clients`, samples, 1.15);
}

/** Opens `size` connections at once to a fresh (started) room: connect → first frame. */
async function connectBurst(base: URL, size: number, rounds: number): Promise<void> {
  const each = byImpl<number[]>(() => []);
  const all = byImpl<number[]>(() => []);
  await interleave(rounds + 1, async (impl, round) => {
    const room = `connect-${RUN}-${round}`;
    await (await fetch(new URL(`/room/${roomOf(impl)}/${room}`, base))).text(); // start the object first
    const start = performance.now();
    const clients = await Promise.all(
      Array.from({ length: size }, async (_, i) => {
        const opened = performance.now();
        const client = await connect(urlOf(base, impl, room, `c${i}`));
        return { client, ms: client.firstFrameAt - opened };
      }),
    );
    const total = Math.max(...clients.map(({ client }) => client.firstFrameAt)) - start;
    if (round > 0) {
      // round 0 is the warm-up
      for (const { ms } of clients) each[impl].push(ms);
      all[impl].push(total);
    }
    await closeAll(clients.map(({ client }) => client));
  });
  percentiles(`connect → first frame (${size} at once, per connection)`, each, 1.1);
  medianOf(`connect → first frame (${size} at once, all)`, all, 1.1);
}

/** @returns the id of the instance answering `client` (the rooms' `i:`; a fresh one after each eviction) */
async function instanceId(client: Client): Promise<string> {
  let id = "";
  await roundTrip(client, "i:", (d) => d.startsWith("i:") && Boolean((id = d)));
  return id;
}

/** Evicts the object (workerd:unsafe evict, WebSockets kept open), then times the first message. */
async function wake(base: URL, rounds: number): Promise<void> {
  const clients = {} as Record<Impl, Client>;
  for (const impl of IMPLS) clients[impl] = await connect(urlOf(base, impl, `wake-${RUN}`));
  const samples = byImpl<number[]>(() => []);
  let fresh = 0;
  await interleave(rounds + 1, async (impl, round) => {
    const before = await instanceId(clients[impl]);
    await evict(base, impl, `wake-${RUN}`);
    const ms = await roundTrip(clients[impl], `e:wake${round}`, (d) => d === `e:wake${round}`);
    if ((await instanceId(clients[impl])) !== before) fresh++;
    if (round > 0) samples[impl].push(ms);
  });
  await closeAll(Object.values(clients));
  if (fresh !== (rounds + 1) * IMPLS.length) throw new Error(`only ${fresh} of ${(rounds + 1) * IMPLS.length} evictions produced a fresh instance`);
  medianOf("wake after eviction (first message → reply)", samples, 1.2);
  figures.push({ measure: "wake after eviction (first message → reply)", stat: "p90", unit: "ms", values: values((i) => quantile(samples[i], 0.9)) });
}

const echoFrame = (n: number) => `e:${n}`;
const rpcFrame = (n: number) => `{"type":"rpc","id":"${n}","method":"echo","args":[${n}]}`;

/**
 * Saturation: `size` clients per implementation, each sending its next frame as soon as the
 * previous one is answered (closed loop), `windowMs` per round. Answered frames per second
 * and workerd CPU time per answered frame; median over the rounds. `loaded`: the worker's bundle
 * includes `getCurrentAgent()`, so dokit enters a context per event (rows without a target).
 */
async function saturation(base: URL, name: string, frame: (n: number) => string, size: number, rounds: number, windowMs: number, loaded = false): Promise<void> {
  const pids = workerdPids();
  const all = await rooms(base, `sat-${name}`, size);
  const placement = NO_PIN ? { pinned: "not pinned (--no-pin)", unpin() {} } : pinWorkerd(pids);
  pinned = placement.pinned;
  try {
    await saturationRounds(all, name, frame, size, rounds, windowMs, pids, loaded);
  } finally {
    placement.unpin();
  }
}

async function saturationRounds(
  all: Record<Impl, Client[]>,
  name: string,
  frame: (n: number) => string,
  size: number,
  rounds: number,
  windowMs: number,
  pids: number[],
  loaded: boolean,
): Promise<void> {
  const rate = byImpl<number[]>(() => []);
  const cpu = byImpl<number[]>(() => []);
  await interleave(1, (impl) => closedLoop(all[impl], frame, Math.min(windowMs, 1_000), pids).then(() => {})); // warm-up
  await interleave(rounds, async (impl) => {
    const window = await closedLoop(all[impl], frame, windowMs, pids);
    rate[impl].push(window.perSecond);
    cpu[impl].push(window.cpuPerMessageUs);
  });
  await closeRooms(all);
  const measure = `${name} saturation (${size} clients, closed loop)${loaded ? ", getCurrentAgent() loaded" : ""}`;
  const paired = (samples: Record<Impl, number[]>) => ({ "dokit/raw": pairedRatio(samples.dokit, samples.raw), "dokit/ref": pairedRatio(samples.dokit, samples.ref) });
  const [rateTarget, cpuTarget] = loaded ? [undefined, undefined] : [0.95, 1.05];
  figures.push({ measure, stat: "answered", unit: "msg/s", higherIsBetter: true, values: values((i) => median(rate[i])), samples: counts(rate), target: rateTarget, paired: paired(rate) });
  figures.push({ measure, stat: "workerd CPU/msg", unit: "µs", values: values((i) => median(cpu[i])), samples: counts(cpu), target: cpuTarget, paired: paired(cpu) });
}

/** Evicts a room and times `probe`, its first message; `client` is one of its connections. @returns ms, and whether a fresh instance answered */
async function evictThenTime(base: URL, impl: Impl, room: string, client: Client, probe: () => Promise<number>): Promise<{ ms: number; fresh: boolean }> {
  const before = await instanceId(client);
  await evict(base, impl, room);
  const ms = await probe();
  return { ms, fresh: (await instanceId(client)) !== before };
}

/**
 * Objects each open-connections measure spreads its rounds over, one after another: where a
 * room's object and its sockets land in memory moves its wake by 15–25 µs either way at 1,000
 * open (bench/README.md, "How noisy each figure is"), so one object per room makes the figure a
 * draw of that placement. Three objects per room average it.
 */
const OPEN_OBJECTS = 3;

/**
 * With `size` connections open on an object (one of them the probe, the rest idle): the warm
 * echo round trip, the first message after an eviction (→ echo), and the first broadcast after
 * an eviction (→ received by all `size`). The rounds are spread over {@link OPEN_OBJECTS}
 * objects per room, each opened, measured and closed in turn; the samples are pooled.
 */
async function openConnections(base: URL, size: number, trips: number, wakeRounds: number): Promise<void> {
  const warm = byImpl<number[]>(() => []);
  const wakeEcho = byImpl<number[]>(() => []);
  const wakeBroadcast = byImpl<number[]>(() => []);
  let stale = 0;
  let n = 0;
  for (let object = 0; object < OPEN_OBJECTS; object++) {
    const name = `open${size}o${object}`;
    const all = await rooms(base, name, size);
    const room = `${name}-${RUN}`;
    await interleave(3, async (impl) => {
      for (let i = 0; i < 10; i++, n++) await roundTrip(all[impl][0]!, echoFrame(n), (d) => d === echoFrame(n));
    });
    await interleave(Math.ceil(trips / 10 / OPEN_OBJECTS), async (impl) => {
      for (let i = 0; i < 10; i++, n++) warm[impl].push(await roundTrip(all[impl][0]!, echoFrame(n), (d) => d === echoFrame(n)));
    });
    // Each object's first round is not counted (its first wakes after the connections opened).
    await interleave(Math.ceil(wakeRounds / OPEN_OBJECTS) + 1, async (impl, round) => {
      const tag = `w${object}-${round}`;
      const probe = all[impl][0] as Client; // connectMany opened `size` (at least 10)
      const echoed = await evictThenTime(base, impl, room, probe, () => roundTrip(probe, `e:${tag}`, (d) => d === `e:${tag}`));
      const broadcast = await evictThenTime(base, impl, room, probe, () => fanOut(all[impl], () => probe.ws.send(`b:${tag}`), (d) => d === `b:${tag}`));
      if (!echoed.fresh || !broadcast.fresh) stale++;
      if (round > 0) {
        wakeEcho[impl].push(echoed.ms);
        wakeBroadcast[impl].push(broadcast.ms);
      }
    });
    await closeRooms(all);
  }
  if (stale > 0) throw new Error(`${stale} evictions with ${size} open did not produce a fresh instance`);
  percentiles(`echo round trip, ${size} open`, warm, 1.05);
  medianOf(`wake → echo, ${size} open`, wakeEcho, 1.05);
  medianOf(`wake → broadcast to all, ${size} open`, wakeBroadcast);
}

/**
 * Connection scale, one implementation at a time (in the round's order): `size` connections opened
 * 50 at a time to one fresh object; open time per connection, then the fan-out of a broadcast to
 * all of them. (Memory per connection is measured in a worker of its own: {@link connectionMemory}.)
 */
async function connectionScale(base: URL, size: number, rounds: number, fanRounds: number): Promise<void> {
  const open = byImpl<number[]>(() => []);
  const fan = byImpl<number[]>(() => []);
  // Warm-up, not recorded: `size` sockets in a room of each implementation. workerd's heap
  // grows, and its code warms, for whichever room opens thousands of sockets first; with a single
  // warm-up room, the first measured room pays for it and single runs swing by 30-40 %.
  for (const impl of IMPLS) {
    await closeAll(await connectMany((i) => urlOf(base, impl, `scale-warm-${RUN}`, `c${i}`), size));
    await sleep(300);
  }
  // Then `rounds` rounds of a fresh room per implementation, one room at a time, in the round's order.
  await interleave(rounds, async (impl, round) => {
    const room = `scale${size}-${RUN}-${round}`;
    await (await fetch(new URL(`/room/${roomOf(impl)}/${room}`, base))).text(); // start the object first
    await sleep(200);
    const start = performance.now();
    const clients = await connectMany((i) => urlOf(base, impl, room, `c${i}`), size);
    open[impl].push((performance.now() - start) / size);
    await sleep(500);
    for (let r = 0; r < fanRounds + 1; r++) {
      const message = `b:scale${r}`;
      const ms = await fanOut(clients, () => clients[0]!.ws.send(message), (d) => d === message);
      if (r > 0) fan[impl].push(ms);
    }
    await closeAll(clients);
    await sleep(500);
  });
  medianOf(`${size} connections: open, per connection`, open, 1.05);
  medianOf(`${size} connections: broadcast fan-out`, fan, 1.1);
}

/**
 * Memory per connection, in a worker of its own (started with workerd's inspector and
 * `--expose-gc`, which the other measures run without): per round and implementation, in the
 * round's order, a fresh object is started; a full collection, the isolate's live heap read over
 * the inspector; `size` connections opened; a full collection, the heap read again. The growth of
 * V8's heap plus the embedder's (workerd's objects on cppgc), / `size`, is what each open
 * connection keeps alive in the isolate. Not workerd's resident set: that counts the allocator's
 * free pages and the previous rounds' garbage, and can read below zero.
 */
async function connectionMemory(size: number, rounds: number): Promise<void> {
  const worker = await startBenchWorker(new URL("./worker/wrangler.jsonc", import.meta.url).pathname, { inspector: true, v8Flags: "--expose-gc" });
  const base = worker.direct;
  log(`memory worker at ${base.href} (inspector ${worker.inspector?.href}, --expose-gc)`);
  const heap = await openHeapReader(worker.inspector as URL, base);
  const total = byImpl<number[]>(() => []);
  const js = byImpl<number[]>(() => []);
  try {
    // Warm-up, not recorded: one room of each, so code and the heap's own structures exist before the first round.
    for (const impl of IMPLS) await closeAll(await connectMany((i) => urlOf(base, impl, `memory-warm-${RUN}`, `c${i}`), Math.min(size, 200)));
    await interleave(rounds, async (impl, round) => {
      const room = `memory${size}-${RUN}-${round}`;
      await (await fetch(new URL(`/room/${roomOf(impl)}/${room}`, base))).text(); // start the object first
      const before = await heap.afterGc();
      const clients = await connectMany((i) => urlOf(base, impl, room, `c${i}`), size);
      await sleep(200);
      const after = await heap.afterGc();
      total[impl].push((after.js + after.embedder - before.js - before.embedder) / size / 1024);
      js[impl].push((after.js - before.js) / size / 1024);
      await closeAll(clients);
      await sleep(200);
    });
  } finally {
    heap.close();
    await worker.dispose();
  }
  const perConnection = `${size} connections: isolate heap per connection`;
  figures.push({ measure: perConnection, stat: "V8 + embedder", unit: "KB", values: values((i) => median(total[i])), samples: counts(total) });
  figures.push({ measure: perConnection, stat: "V8 heap alone", unit: "KB", values: values((i) => median(js[i])), samples: counts(js) });
}

/** A brand-new object: constructor + start + first request, as seen by the client. */
async function startup(base: URL, rounds: number): Promise<void> {
  const get = byImpl<number[]>(() => []);
  const ws = byImpl<number[]>(() => []);
  await interleave(rounds + 1, async (impl, round) => {
    let start = performance.now();
    await (await fetch(new URL(`/room/${roomOf(impl)}/cold-get-${RUN}-${round}`, base))).text();
    if (round > 0) get[impl].push(performance.now() - start);
    start = performance.now();
    const client = await connect(urlOf(base, impl, `cold-ws-${RUN}-${round}`));
    if (round > 0) ws[impl].push(client.firstFrameAt - start);
    await closeAll([client]);
  });
  medianOf("startup: new object, first GET", get);
  medianOf("startup: new object, connect → first frame", ws);
}

// ---------------------------------------------------------------------- main

const t0 = performance.now();

function versions(): { node: string; workerd: string; wrangler: string; agents: string } {
  const require = createRequire(import.meta.url);
  const wranglerPath = require.resolve("wrangler");
  const fromWrangler = createRequire(wranglerPath);
  const fromMiniflare = createRequire(fromWrangler.resolve("miniflare"));
  const agents = (JSON.parse(readFileSync(new URL("./node_modules/agents/package.json", import.meta.url), "utf8")) as { version: string }).version;
  return {
    node: process.version,
    workerd: fromMiniflare("workerd/package.json").version,
    wrangler: fromWrangler("wrangler/package.json").version,
    agents,
  };
}

/** Starts a bench worker from a config next to this file. @returns it, and the URL the clients use */
async function startWorker(config: string): Promise<{ worker: Awaited<ReturnType<typeof startBenchWorker>>; base: URL }> {
  const worker = await startBenchWorker(new URL(config, import.meta.url).pathname);
  const base = VIA_PROXY ? worker.proxied : worker.direct;
  log(`worker at ${base.href} (${VIA_PROXY ? "through wrangler's proxy worker" : `direct; wrangler's proxy is ${worker.proxied.href}`})`);
  return { worker, base };
}

/** The worker with the MCP pair: its bundle loads getCurrentAgent(), so the saturation rows again, then MCP. */
async function secondWorker(): Promise<void> {
  if (!mcpExported() && !FORCE_MCP) return log("the MCP worker skipped (mcp, saturation with getCurrentAgent() loaded): the package does not export dokit/mcp yet");
  const { worker, base } = await startWorker("./worker/wrangler.mcp.jsonc");
  try {
    if (enabled("saturation")) {
      mark("saturation");
      log("saturation: echo, getCurrentAgent() loaded");
      await saturation(base, "echo", echoFrame, 100, scale(18), 1_000, true);
      log("saturation: rpc, getCurrentAgent() loaded");
      await saturation(base, "rpc", rpcFrame, 100, scale(18), 1_000, true);
    }
    if (enabled("mcp")) {
      mark("mcp");
      log("mcp");
      figures.push(...((await mcpMeasures(base, scale(300), scale(20), FORCE_MCP)) ?? []));
    }
  } finally {
    await worker.dispose();
  }
}

async function main(): Promise<void> {
  const machine = { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? "?", platform: `${os.platform()} ${os.release()}`, ...versions() };
  console.log(
    `dokit bench · ${machine.cores} cores (${machine.cpu}) · node ${machine.node} · workerd ${machine.workerd} · wrangler ${machine.wrangler} · agents ${machine.agents} · local observability ${process.env.X_LOCAL_OBSERVABILITY === "false" ? "off" : "on"} · ${COMPRESSION}${QUICK ? " · QUICK" : ""}${DOKIT_ROOM ? ` · THE DOKIT COLUMN IS THE ${DOKIT_ROOM.toUpperCase()} ROOM` : ""}`,
  );

  // Clients connect to the user worker directly (see lib/worker.ts); --via-proxy uses wrangler's proxy worker.
  let observability: Awaited<ReturnType<typeof import("./observability.ts").observabilityBench>> | undefined;
  let presence: Awaited<ReturnType<typeof presenceBench>> | undefined;
  // The rooms' worker never imports getCurrentAgent(), as a Worker of such rooms would not: its
  // bundle leaves it out, and dokit enters no context per event (docs/lifecycle.md). The MCP pair
  // runs in a second worker (worker/worker-mcp.ts: the same rooms plus McpHandler, which reads it),
  // started after the first stops, where the saturation rows are measured again with it loaded.
  const { worker, base } = await startWorker("./worker/wrangler.jsonc");
  try {
    if (enabled("echo")) (mark("echo"), log("echo"), await echo(base));
    if (enabled("rpc")) (mark("rpc"), log("rpc"), await rpc(base));
    if (enabled("saturation")) {
      mark("saturation");
      log("saturation: echo");
      await saturation(base, "echo", echoFrame, 100, scale(18), 1_000);
      log("saturation: rpc");
      await saturation(base, "rpc", rpcFrame, 100, scale(18), 1_000);
    }
    if (enabled("open")) {
      mark("open");
      for (const size of [10, 100, 1_000]) {
        log(`${size} open connections`);
        await openConnections(base, size, scale(540), scale(54));
      }
    }
    if (enabled("scale")) (mark("scale"), log("connection scale"), await connectionScale(base, QUICK ? 1_000 : 4_000, QUICK ? 1 : 12, QUICK ? 3 : 4));
    if (enabled("fanout")) {
      mark("fanout");
      log("fan-out 200");
      await broadcast(base, 200, scale(30));
      log("fan-out 1000");
      await broadcast(base, 1_000, scale(30));
    }
    if (enabled("state")) (mark("state"), log("state fan-out"), await stateFanOut(base, 200, scale(30)));
    if (enabled("connect")) (mark("connect"), log("connect 200"), await connectBurst(base, 200, scale(24)));
    if (enabled("wake")) (mark("wake"), log("wake"), await wake(base, scale(48)));
    if (enabled("startup")) (mark("startup"), log("startup"), await startup(base, scale(30)));
    if (enabled("presence")) (mark("presence"), log("presence"), (presence = await presenceBench(base, RUN, presenceSettings(QUICK, NO_PIN), log)), figures.push(...presence.figures));
    if (enabled("events")) {
      log("events (dokit/observability)");
      observability = await (await import("./observability.ts")).observabilityBench(base, RUN, scale);
    }
    if (enabled("heartbeat")) (mark("heartbeat"), log("heartbeat"), figures.push(...(await heartbeatIdle(base, RUN, HEARTBEAT, log))));
    if (enabled("deadlink")) (mark("deadlink"), log("dead link"), figures.push(...(await deadLink(base, RUN, DEAD_LINK, log))));
  } finally {
    await worker.dispose();
  }
  if (enabled("memory")) (mark("memory"), log("connection memory"), await connectionMemory(QUICK ? 1_000 : 4_000, QUICK ? 1 : 6));
  if (!DOKIT_ROOM && (enabled("mcp") || enabled("saturation"))) await secondWorker();
  let roomsReport: { text: string } | undefined;
  if (!DOKIT_ROOM && enabled("rooms")) {
    mark("rooms");
    log("rooms (dokit/rooms: chaos and cost, its own worker)");
    const { roomsBench, roomsSettings } = await import("./rooms.ts");
    const result = await roomsBench(roomsSettings(QUICK), QUICK, log);
    figures.push(...result.figures);
    roomsReport = result;
  }

  let scaleReport: { text: string } | undefined;
  if (!DOKIT_ROOM && enabled("rooms-scale")) {
    mark("rooms-scale");
    log("rooms at scale (dokit/rooms against one object, its own worker and client processes)");
    const { roomsScaleBench, scaleSettings } = await import("./rooms-scale.ts");
    const result = await roomsScaleBench(scaleSettings(QUICK), log);
    figures.push(...result.figures);
    scaleReport = result;
  }

  let inprocReport: { text: string } | undefined;
  if (!DOKIT_ROOM && enabled("rooms-inproc")) {
    mark("rooms-inproc");
    log("rooms at scale, clients in-process (dokit/rooms against one object, the clients inside workerd)");
    const { roomsInprocBench, inprocSettings } = await import("./rooms-inproc.ts");
    const result = await roomsInprocBench(inprocSettings(QUICK), log);
    figures.push(...result.figures);
    inprocReport = result;
  }

  let bundle: Awaited<ReturnType<typeof bundleReport>> | undefined;
  if (enabled("bundle")) {
    log("bundle");
    bundle = await bundleReport();
  }

  console.log(
    `\nLatency (loopback, ${VIA_PROXY ? "through wrangler's proxy worker" : "direct to the user worker"}, ${machine.cores} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}; lower is better; ratios are dokit over raw / over the reference; saturation: ${pinned})\n`,
  );
  console.log(table(figures));
  console.log(
    "\nraw and dokit are addressed by ids without a name; the reference needs its name, so its objects pay wrangler's local object wrapper on each construction (a SQLite write, 1-2 ms): its wake and startup figures, and dokit/ref there, are not comparable (bench/README.md, \"How it runs\").",
  );
  if (presence) console.log(`\n${presence.text}`);
  if (observability) {
    console.log("\nObservability (dokit/observability: the dokit room without it, installed with no subscriber, and with one subscriber; bench/observability.ts)\n");
    console.log(observability.text);
  }
  if (roomsReport) console.log(`\nRooms (dokit/rooms over many shards, dokit only; bench/README.md)\n\n${roomsReport.text}`);
  if (scaleReport) console.log(`\nRooms at scale (dokit/rooms over 8 and 16 shards against one object; bench/README.md)\n\n${scaleReport.text}`);
  if (inprocReport) console.log(`\nRooms at scale, clients in-process (dokit/rooms over 8 and 16 shards against one object; bench/MEASURES.md)\n\n${inprocReport.text}`);
  if (bundle) {
    console.log("\nBundle (esbuild, minified; gzip level 9)\n");
    console.log(bundle.text);
  }
  let jobs: Awaited<ReturnType<typeof import("./jobs.ts").jobsBench>> | undefined;
  if (enabled("jobs")) {
    jobs = await (await import("./jobs.ts")).jobsBench({ quick: QUICK });
    console.log(`\nJobs (dokit Scheduler vs a raw alarm loop over its SQL table; ratio dokit over raw)\n\n${jobs.text}`);
  }
  let streams: Awaited<ReturnType<typeof import("./streams.ts").streamsBench>> | undefined;
  if (enabled("streams")) {
    streams = await (await import("./streams.ts")).streamsBench({ quick: QUICK });
    console.log(`\nStreams (dokit/streams vs agents/streams 0.32.0; ratio dokit over the reference)\n\n${streams.text}`);
  }
  let tasks: Awaited<ReturnType<typeof import("./tasks.ts").tasksBench>> | undefined;
  if (enabled("tasks")) {
    tasks = await (await import("./tasks.ts")).tasksBench({ quick: QUICK });
    console.log(`\nTasks (dokit/tasks vs agents/tasks 0.32.0 in one workerd; ratio dokit over the reference)\n\n${tasks.text}`);
  }
  let yjs: Awaited<ReturnType<typeof import("./yjs.ts").yjsBench>> | undefined;
  if (enabled("yjs")) {
    yjs = await (await import("./yjs.ts")).yjsBench({ quick: QUICK, log });
    console.log(`\n${yjs.text}`);
  }
  let sessions: Awaited<ReturnType<typeof import("./sessions.ts").sessionsBench>> | undefined;
  if (enabled("sessions")) {
    sessions = await (await import("./sessions.ts")).sessionsBench({ quick: QUICK });
    console.log(`\nSessions (dokit/sessions beside agents/sessions 0.32.0 in one workerd; ratio dokit over the reference)\n\n${sessions.text}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(`\nbench took ${seconds.toFixed(0)} s`);

  const json = {
    date: new Date().toISOString(),
    machine,
    quick: QUICK,
    dokitRoom: DOKIT_ROOM ?? "dokit",
    transport: VIA_PROXY ? "wrangler proxy worker" : "direct to the user worker",
    compression: EXTENSION,
    pinned,
    seconds,
    figures: figures.map((f) => ({
      ...f,
      ratios: {
        dokitToRaw: f.paired?.["dokit/raw"] ?? ratio(f.values.dokit, f.values.raw),
        dokitToRef: f.paired?.["dokit/ref"] ?? ratio(f.values.dokit, f.values.ref),
        refToRaw: ratio(f.values.ref, f.values.raw),
      },
    })),
    bundle: bundle?.rows,
    observability: observability?.figures,
  };
  const out = new URL("./results/", import.meta.url);
  mkdirSync(out, { recursive: true });
  const file = new URL(DOKIT_ROOM ? `latest-${DOKIT_ROOM}.json` : "latest.json", out);
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  console.log(`results: ${file.pathname}`);

  // Each measure's result file (lib/results.ts); RESULTS.md and README.md's figures are rendered
  // from the published ones (not the lower bounds' diagnostic runs, nor a quick run's).
  if (DOKIT_ROOM) return;
  const command = commandLine("pnpm bench");
  const written: URL[] = [];
  const record = (run: Omit<RunResult, "command" | "quick">) => written.push(recordRun({ ...run, command, quick: QUICK }));
  for (const [measure, list] of figuresByMeasure()) {
    if (list.length > 0) record({ measure, title: TITLES[measure] ?? measure, columns: IMPL_COLUMNS, figures: list.map(fromFigure) });
  }
  if (observability) {
    const columns = ["dokit", "installed", "subscribed", "installed/dokit", "subscribed/dokit"];
    record({
      measure: "events",
      title: TITLES.events ?? "events",
      columns,
      figures: observability.figures.map((f) => ({
        name: `${f.measure}, ${f.stat}`,
        unit: "ms",
        values: { ...f.values, "installed/dokit": ratio(f.values.installed, f.values.dokit), "subscribed/dokit": ratio(f.values.subscribed, f.values.dokit) },
      })),
    });
  }
  if (bundle) record(bundleRun(bundle.rows));
  if (jobs) record(jobsRun(jobs.figures));
  if (streams) record(streamsRun(streams.figures));
  if (tasks) record(tasksRun(tasks.figures));
  if (yjs) record(yjsRun(yjs.figures));
  if (sessions) record(sessionsRun(sessions.figures));
  console.log(`result files: ${written.map((f) => f.pathname).join(", ")}`);
  // RESULTS.md and README.md's figures, from the result files as this run left them.
  if (!QUICK) execFileSync(process.execPath, [new URL("./render.ts", import.meta.url).pathname], { stdio: "inherit" });
}

/** The result tables' headings, by measure. */
const TITLES: Record<string, string> = {
  echo: "Echo round trip",
  rpc: "Rpc round trip",
  saturation: "Saturation (and with getCurrentAgent() loaded)",
  open: "Echo and wake with 10 / 100 / 1,000 open",
  scale: "4,000 connections: open and broadcast",
  memory: "4,000 connections: isolate heap per connection",
  fanout: "Fan-out",
  state: "State change",
  connect: "Connect",
  wake: "Wake after eviction",
  startup: "Startup",
  mcp: "MCP tools/call",
  events: "Events (dokit/observability)",
  presence: "Presence",
  heartbeat: "Idle heartbeat",
  deadlink: "Dead link",
  rooms: "Rooms: chaos and cost",
  "rooms-scale": "Rooms at scale",
  "rooms-inproc": "Rooms at scale, clients in-process",
  jobs: "Jobs",
  yjs: "Yjs",
};

await main();
