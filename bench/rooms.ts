// The rooms bench (`pnpm bench --only=rooms`, or `node bench/rooms.ts` alone), on its own worker
// (bench/worker-rooms/): one logical room of dokit/rooms over many shards.
//   chaos  thousands of clients over at least 8 shards, publishers on several shards at once, while a
//          driver evicts and resets shards and the sequencer and the objects fail a share of their
//          calls to each other. A checker proves every client received every message exactly once,
//          in one total order and in each publisher's order, and that every client that reconnected
//          had its gap filled (or was told of it). Figures: messages/s, delivery latency p50/p99.
//   cost   object-to-object calls per published message, counted by the objects themselves, against
//          the shard count and the shards' batch window, at a fixed publish rate and no faults.
import { WebSocket } from "ws";
import { arg } from "./lib/cli.ts";
import { startBenchWorker } from "./lib/worker.ts";
import { type Figure, quantile } from "./lib/stats.ts";
import { recordFigures } from "./lib/results.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settings of the rooms measures; `pnpm bench` flags in brackets. */
export interface RoomsSettings {
  /** Clients of the chaos room [`--rooms-clients=`, 2,000; 400 with --quick]. */
  clients: number;
  /** Shards of the chaos room [`--rooms-shards=`, 8]. */
  shards: number;
  /** Publishing clients, spread over the shards [`--rooms-publishers=`, 16]. */
  publishers: number;
  /** Messages each publisher sends [`--rooms-messages=`, 20; 10 with --quick]. */
  messages: number;
  /** The share of counted object-to-object calls failed during the chaos run [`--rooms-faults=`, 0.05]. */
  faultRate: number;
  /** Between two strikes of the chaos driver, in ms [`--rooms-strike-ms=`, 500; a long one, with no faults, is the calm baseline]. */
  strikeMs: number;
  /** Skip the cost sweep [`--rooms-no-cost`]. */
  noCost: boolean;
  /** The chaos room's fan-out: through relays 4 wide (`tree`) or the sequencer alone (`flat`) [`--rooms-fanout=`, tree]. */
  fanout: "tree" | "flat";
}

type Stats = { publish: number; join: number; leave: number; report: number; since: number; deliver: number; relay: number; fromSequencer: number; faults: number; messages: number };

/** What the checker found wrong (empty when the run is clean). */
class Violations {
  readonly list: string[] = [];
  count = 0;
  add(what: string): void {
    if (this.count++ < 20) this.list.push(what);
  }
}

/** The order every client must agree on: seq → message id, and id → seq. */
class Order {
  readonly bySeq = new Map<number, string>();
  readonly byId = new Map<string, number>();
  readonly violations: Violations;
  constructor(violations: Violations) {
    this.violations = violations;
  }
  see(client: string, seq: number, id: string): void {
    const known = this.bySeq.get(seq);
    if (known === undefined) {
      this.bySeq.set(seq, id);
      const other = this.byId.get(id);
      if (other !== undefined) this.violations.add(`${id} ordered twice: seq ${other} and ${seq}`);
      this.byId.set(id, seq);
    } else if (known !== id) this.violations.add(`${client}: seq ${seq} is ${id} here and ${known} elsewhere`);
  }
}

/** One client of the room: reconnects (through the router, to its shard, with its last seq) whenever its socket closes. */
class BenchClient {
  ws: WebSocket | undefined;
  shard = -1;
  /** The last seq received (or told of as gone); -1 before the first welcome. */
  last = -1;
  /** The seq this client started after (its first welcome's). */
  start = -1;
  received = 0;
  gapsTold = 0;
  reconnects = 0;
  welcomed = false;
  closing = false;
  /** Published, not acknowledged: id → frame (resent in order on each welcome and when refused). */
  readonly unacked = new Map<string, { frame: string; at: number }>();
  /** This publisher's own messages it has not received back yet. */
  inFlight = 0;
  #welcomeWaiters: (() => void)[] = [];

  readonly id: string;
  readonly url: (client: BenchClient) => string;
  readonly ctx: { order: Order; violations: Violations; latencies: number[]; onOwn: (client: BenchClient) => void };
  /** The loopback address this client's sockets come from (`undefined`: the system's choice, 127.0.0.1). */
  localAddress: string | undefined;

  constructor(id: string, url: BenchClient["url"], ctx: BenchClient["ctx"]) {
    this.id = id;
    this.url = url;
    this.ctx = ctx;
  }

  connect(): void {
    const ws = new WebSocket(this.url(this), { perMessageDeflate: false, ...(this.localAddress && { localAddress: this.localAddress }) });
    this.ws = ws;
    this.welcomed = false;
    let since = this.last >= 0 ? this.last : undefined;
    ws.on("message", (raw) => {
      if (ws !== this.ws) return;
      const text = String(raw);
      if (text.charCodeAt(0) !== 123) return;
      const frame = JSON.parse(text) as Record<string, unknown>;
      switch (frame.type) {
        case "dokit_room":
          return this.#message(frame.seq as number, frame.data as { by: string; n: number; t: number });
        case "dokit_room_welcome":
          this.shard = frame.shard as number;
          if (since !== undefined) this.last = since;
          else if (this.last < 0) this.last = this.start = frame.seq as number;
          since = undefined;
          this.welcomed = true;
          for (const { frame: publish } of this.unacked.values()) ws.send(publish);
          for (const resolve of this.#welcomeWaiters.splice(0)) resolve();
          return;
        case "dokit_room_gap":
          if ((frame.from as number) !== this.last + 1) this.ctx.violations.add(`${this.id}: gap from ${String(frame.from)} after seq ${this.last}`);
          this.last = frame.to as number;
          this.gapsTold++;
          return;
        case "dokit_room_ack":
          this.unacked.delete(frame.id as string);
          return;
        // A catch-up paused after 1 MiB of frames: read this far, send the rest.
        case "dokit_room_more":
          return ws.send(JSON.stringify({ type: "dokit_room_more", token: frame.token }));
        case "dokit_error":
          // The room did not take a publish: it closes this connection next (3010), and everything
          // unacknowledged goes again, in order, on the next one (duplicates are dropped by the room).
          if (frame.code === "ROOM_PUBLISH_FAILED") this.welcomed = false;
          return;
      }
    });
    ws.on("close", () => {
      if (ws !== this.ws || this.closing) return;
      this.reconnects++;
      setTimeout(() => this.connect(), 50 + Math.random() * 200);
    });
    ws.on("error", () => {}); // a close follows
  }

  /** @returns once the current connection has its welcome */
  welcome(): Promise<void> {
    return this.welcomed ? Promise.resolve() : new Promise((resolve) => this.#welcomeWaiters.push(resolve));
  }

  publish(n: number): void {
    const id = `${this.id}-${n}`;
    const frame = JSON.stringify({ type: "dokit_room_publish", id, data: { by: this.id, n, t: performance.now() } });
    this.unacked.set(id, { frame, at: performance.now() });
    this.inFlight++;
    if (this.welcomed && this.ws?.readyState === WebSocket.OPEN) this.ws.send(frame);
  }

  /** Resends, in order, what has waited for its ack longer than `ms` (a shard reset with the batch in memory and the socket kept). */
  resendOlderThan(ms: number): void {
    const oldest = this.unacked.values().next().value;
    if (!oldest || performance.now() - oldest.at < ms || !this.welcomed || this.ws?.readyState !== WebSocket.OPEN) return;
    for (const entry of this.unacked.values()) {
      entry.at = performance.now();
      this.ws.send(entry.frame);
    }
  }

  close(): void {
    this.closing = true;
    this.ws?.close(1000, "bench done");
  }

  #message(seq: number, data: { by: string; n: number; t: number }): void {
    if (seq !== this.last + 1) this.ctx.violations.add(`${this.id}: seq ${seq} after ${this.last} (${seq <= this.last ? "a duplicate" : "an untold gap"})`);
    if (seq <= this.last) return;
    this.last = seq;
    this.received++;
    this.ctx.order.see(this.id, seq, `${data.by}-${data.n}`);
    this.ctx.latencies.push(performance.now() - data.t);
    if (data.by === this.id) {
      this.inFlight--;
      this.ctx.onOwn(this);
    }
  }
}

/** The worker's counters and switches. */
function control(base: URL) {
  const get = async (path: string) => {
    const response = await fetch(new URL(path, base));
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  return {
    stats: async (reset = false) => (await (await get(reset ? "/stats/reset" : "/stats")).json()) as Stats,
    faults: async (rate: number) => void (await (await get(`/faults?rate=${rate}`)).text()),
    strike: async (action: "evict" | "abort", kind: string, room: string, index?: number | string) =>
      (await get(`/${action}/${kind}/${encodeURIComponent(room)}${index === undefined ? "" : `/${index}`}`)).text(),
  };
}

/** Opens `count` clients of a room (client i on shard `place(i)`, or where the router's hash puts it) and waits for their welcomes. */
async function openRoom(
  base: URL,
  batch: string,
  room: string,
  shards: number,
  count: number,
  ctx: BenchClient["ctx"],
  place?: (i: number) => number,
): Promise<BenchClient[]> {
  const url = (client: BenchClient) => {
    const u = new URL(`/room/${batch}/${encodeURIComponent(room)}`, base);
    u.protocol = "ws:";
    u.searchParams.set("_pk", client.id);
    u.searchParams.set("shards", String(shards));
    if (client.shard >= 0) u.searchParams.set("shard", String(client.shard));
    if (client.last >= 0) u.searchParams.set("since", String(client.last));
    return u.href;
  };
  const clients: BenchClient[] = [];
  for (let i = 0; i < count; i += 50) {
    const group = Array.from({ length: Math.min(50, count - i) }, (_, k) => {
      const client = new BenchClient(`c${i + k}`, url, ctx);
      client.localAddress = sourceAddress(i + k, count);
      if (place) client.shard = place(i + k);
      client.connect();
      return client;
    });
    await Promise.all(group.map((client) => client.welcome()));
    clients.push(...group);
  }
  return clients;
}

/** Clients per loopback source address: well under the 28,232 ephemeral ports of one address. */
const CLIENTS_PER_ADDRESS = 20_000;

/**
 * @returns the source address of client `i` of `count`: 127.0.0.1 while one address has ports enough,
 * else one of 127.0.0.1, 127.0.0.2, … in turn (Linux answers the whole of 127/8 on loopback).
 */
function sourceAddress(i: number, count: number): string | undefined {
  const addresses = Math.ceil(count / CLIENTS_PER_ADDRESS);
  return addresses <= 1 ? undefined : `127.0.0.${1 + (i % addresses)}`;
}

async function closeRoom(clients: BenchClient[]): Promise<void> {
  for (const client of clients) client.close();
  await sleep(300);
}

/** @returns once `done()` holds, checking every 50 ms; throws after `ms` with `what()` */
async function until(done: () => boolean, ms: number, what: () => string): Promise<void> {
  const end = performance.now() + ms;
  while (!done()) {
    if (performance.now() > end) throw new Error(`rooms: timed out: ${what()}`);
    await sleep(50);
  }
}

/** Picks `count` publishers on as many different shards as there are. */
function pickPublishers(clients: BenchClient[], count: number): BenchClient[] {
  const byShard = new Map<number, BenchClient[]>();
  for (const client of clients) byShard.set(client.shard, [...(byShard.get(client.shard) ?? []), client]);
  const picked: BenchClient[] = [];
  for (let round = 0; picked.length < count; round++) {
    let added = false;
    for (const group of byShard.values()) {
      const client = group[round];
      if (client && picked.length < count) (picked.push(client), (added = true));
    }
    if (!added) break;
  }
  return picked;
}

/**
 * Checks the whole run: every client's seqs were contiguous from its start (checked as they came),
 * every client reached the room's last seq, every published message was ordered exactly once, and each
 * publisher's messages are in the order it sent them.
 */
function checkRun(clients: BenchClient[], publishers: BenchClient[], messages: number, order: Order, violations: Violations): void {
  const head = Math.max(...order.bySeq.keys());
  for (const client of clients) if (client.last !== head) violations.add(`${client.id} ended at seq ${client.last}, the room at ${head}`);
  for (const publisher of publishers) {
    let previous = -Infinity;
    for (let n = 1; n <= messages; n++) {
      const seq = order.byId.get(`${publisher.id}-${n}`);
      if (seq === undefined) violations.add(`${publisher.id}-${n} was never delivered`);
      else if (seq < previous) violations.add(`${publisher.id}-${n} ordered before ${publisher.id}-${n - 1}`);
      else previous = seq;
    }
  }
  if (order.bySeq.size !== publishers.length * messages) violations.add(`${order.bySeq.size} seqs for ${publishers.length * messages} messages`);
}

/** The chaos run. @returns its figures */
async function chaos(base: URL, settings: RoomsSettings, run: string, log: (message: string) => void): Promise<{ figures: Figure[]; lines: string[] }> {
  const ctl = control(base);
  const room = `chaos-${run}`;
  const violations = new Violations();
  const order = new Order(violations);
  const latencies: number[] = [];
  const publishers: BenchClient[] = [];
  let nextOf = new Map<BenchClient, number>();
  const ctx = { order, violations, latencies, onOwn: (client: BenchClient) => send(client) };
  /** A publisher sends its next message once it received its previous one back (one in flight each). */
  const send = (client: BenchClient) => {
    const n = (nextOf.get(client) ?? 0) + 1;
    if (n > settings.messages || client.inFlight > 0) return;
    nextOf.set(client, n);
    client.publish(n);
  };
  const tree = settings.fanout === "tree";
  const kind = tree ? "t4" : "b10";
  const sequencer = tree ? "tree-sequencer" : "sequencer";
  /** The relays right under a 4-wide sequencer, as the tree makes them (relays below them are not struck). */
  const relays = tree && settings.shards > 4 ? Math.min(4, Math.ceil(settings.shards / 4)) : 0;
  log(`rooms chaos: opening ${settings.clients} clients over ${settings.shards} shards (${tree ? "through relays, 4 wide" : "flat fan-out"})`);
  const clients = await openRoom(base, kind, room, settings.shards, settings.clients, ctx);
  publishers.push(...pickPublishers(clients, settings.publishers));
  const shardsWithPublishers = new Set(publishers.map((p) => p.shard)).size;
  await sleep(1500); // the joins' count announcements
  const before = await ctl.stats(true);
  await ctl.faults(settings.faultRate);
  log(`rooms chaos: ${publishers.length} publishers on ${shardsWithPublishers} shards, ${settings.messages} messages each, faults ${settings.faultRate}, a strike every ${settings.strikeMs} ms`);
  const t0 = performance.now();
  nextOf = new Map();
  for (const publisher of publishers) send(publisher);
  const resender = setInterval(() => publishers.forEach((p) => p.resendOlderThan(2000)), 500);
  // The driver: evicts and resets shards and the sequencer in turn while messages flow.
  const strikes = { evictShard: 0, abortShard: 0, evictSequencer: 0, abortSequencer: 0, evictRelay: 0, abortRelay: 0 };
  let striking = true;
  const driver = (async () => {
    for (let k = 0; striking; k++) {
      // In steps, so the run ends without waiting for a long strike interval.
      for (let waited = 0; striking && waited < settings.strikeMs; waited += 50) await sleep(50);
      if (!striking) break;
      const shard = (k * 3) % settings.shards;
      const relay = relays ? String(k % relays) : undefined;
      switch (k % (relays ? 6 : 4)) {
        case 0:
          if ((await ctl.strike("evict", kind, room, shard)) === "evicted") strikes.evictShard++;
          break;
        case 1:
          await ctl.strike("abort", sequencer, room);
          strikes.abortSequencer++;
          break;
        case 2:
          await ctl.strike("abort", kind, room, shard);
          strikes.abortShard++;
          break;
        case 3:
          if ((await ctl.strike("evict", sequencer, room)) === "evicted") strikes.evictSequencer++;
          break;
        case 4:
          await ctl.strike("abort", "relay", room, relay);
          strikes.abortRelay++;
          break;
        case 5:
          if ((await ctl.strike("evict", "relay", room, relay)) === "evicted") strikes.evictRelay++;
          break;
      }
    }
  })();
  const total = publishers.length * settings.messages;
  try {
    await until(() => publishers.every((p) => (nextOf.get(p) ?? 0) >= settings.messages && p.unacked.size === 0), 300_000, () => `publishes: ${publishers.reduce((s, p) => s + (nextOf.get(p) ?? 0) - p.unacked.size, 0)} of ${total} acknowledged`);
    striking = false;
    await driver;
    await ctl.faults(0);
    const head = () => Math.max(0, ...order.bySeq.keys());
    await until(() => order.bySeq.size >= total && clients.every((c) => c.last >= head()), 300_000, () => `${clients.filter((c) => c.last < head()).length} clients behind seq ${head()}`);
  } finally {
    striking = false;
    clearInterval(resender);
    await ctl.faults(0);
  }
  const elapsed = (performance.now() - t0) / 1000;
  const after = await ctl.stats();
  checkRun(clients, publishers, settings.messages, order, violations);
  const reconnected = clients.filter((c) => c.reconnects > 0);
  const gaps = clients.reduce((s, c) => s + c.gapsTold, 0);
  await closeRoom(clients);
  const calls = callsOf(before, after);
  const delivered = clients.reduce((s, c) => s + c.received, 0);
  const label = `rooms chaos: ${settings.clients} clients, ${settings.shards} shards (${tree ? "relays 4 wide" : "flat"}), ${publishers.length} publishers on ${shardsWithPublishers} shards`;
  const verdict = violations.count === 0 ? "checker: clean" : `checker: ${violations.count} VIOLATIONS`;
  const figures: Figure[] = [
    { measure: label, stat: "messages/s", unit: "msg/s", higherIsBetter: true, values: { dokit: total / elapsed }, note: verdict },
    { measure: label, stat: "deliveries/s", unit: "msg/s", higherIsBetter: true, values: { dokit: delivered / elapsed } },
    { measure: label, stat: "latency p50", unit: "ms", values: { dokit: quantile(latencies, 0.5) } },
    { measure: label, stat: "latency p99", unit: "ms", values: { dokit: quantile(latencies, 0.99) } },
    { measure: label, stat: "calls per message", unit: "calls/msg", values: { dokit: calls.total / total } },
  ];
  const lines = [
    `${label}: ${total} messages in ${elapsed.toFixed(1)} s = ${(total / elapsed).toFixed(1)} msg/s (${(delivered / elapsed).toFixed(0)} deliveries/s to clients)`,
    `  delivery latency (publish → each client): p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms, over ${latencies.length} deliveries`,
    `  chaos: ${strikes.evictShard} shard evictions, ${strikes.abortShard} shard resets, ${strikes.evictSequencer} sequencer evictions, ${strikes.abortSequencer} sequencer resets, ${strikes.evictRelay} relay evictions, ${strikes.abortRelay} relay resets; ${after.faults - before.faults} calls failed on purpose (rate ${settings.faultRate})`,
    `  ${reconnected.length} clients reconnected (${reconnected.reduce((s, c) => s + c.reconnects, 0)} reconnects), every one resumed with its last seq; ${gaps} gap frames`,
    `  calls: ${describeCalls(calls, total)}`,
    `  ${verdict}: every client received every one of the ${total} messages exactly once, in one total order and each publisher's order${violations.count ? ` — NOT SO: ${violations.list.join("; ")}` : ""}`,
  ];
  if (violations.count) throw new Error(lines.join("\n"));
  return { figures, lines };
}

function callsOf(before: Stats, after: Stats) {
  const d = (k: keyof Stats) => after[k] - before[k];
  const total = d("publish") + d("deliver") + d("relay") + d("since") + d("join") + d("leave") + d("report");
  return { publish: d("publish"), deliver: d("deliver"), relay: d("relay"), fromSequencer: d("fromSequencer"), since: d("since"), other: d("join") + d("leave") + d("report"), total };
}

function describeCalls(calls: ReturnType<typeof callsOf>, messages: number): string {
  const per = (n: number) => (n / messages).toFixed(2);
  return `${per(calls.total)} per message (publish ${per(calls.publish)}, deliver ${per(calls.deliver)}, to relays ${per(calls.relay)}, since ${per(calls.since)}, join/leave/report ${per(calls.other)}); made by the sequencer ${per(calls.fromSequencer)}`;
}

/**
 * The cost sweep: for each batch window and shard count, two clients per shard and 4 publishers on
 * 4 shards publishing at a fixed total rate, no faults; the objects count their calls.
 */
async function costSweep(base: URL, run: string, quick: boolean, log: (message: string) => void): Promise<{ figures: Figure[]; lines: string[] }> {
  const ctl = control(base);
  const shardCounts = quick ? [1, 8, 32] : [1, 4, 8, 16, 32];
  const batches = [
    ["b0", "0 ms"],
    ["b10", "10 ms"],
    ["b50", "50 ms"],
    ["t4", "10 ms, relays 4 wide"],
  ] as const;
  const perPublisher = quick ? 40 : 100;
  const ratePerPublisher = 50; // msg/s each, 200 msg/s in all
  const figures: Figure[] = [];
  const lines = [`object-to-object calls per published message, all / made by the sequencer (4 publishers at ${ratePerPublisher} msg/s each, ${perPublisher} messages each, 2 clients per shard, no faults):`, ""];
  lines.push(`| batch window | ${shardCounts.map((s) => `${s} shard${s > 1 ? "s" : ""}`).join(" | ")} |`, `|---|${shardCounts.map(() => "---").join("|")}|`);
  for (const [batch, ms] of batches) {
    const row: string[] = [];
    for (const shards of shardCounts) {
      const room = `cost-${batch}-${shards}-${run}`;
      const violations = new Violations();
      const order = new Order(violations);
      const ctx = { order, violations, latencies: [] as number[], onOwn: () => {} };
      const clients = await openRoom(base, batch, room, shards, 2 * shards, ctx, (i) => i % shards);
      const publishers = pickPublishers(clients, 4);
      await sleep(1500);
      const before = await ctl.stats(true);
      for (let n = 1; n <= perPublisher; n++) {
        for (const publisher of publishers) publisher.publish(n);
        await sleep(1000 / ratePerPublisher);
      }
      const total = publishers.length * perPublisher;
      await until(() => order.bySeq.size >= total && clients.every((c) => c.last >= total), 60_000, () => `cost ${batch}/${shards}: behind`);
      const calls = callsOf(before, await ctl.stats());
      checkRun(clients, publishers, perPublisher, order, violations);
      if (violations.count) throw new Error(`rooms cost ${batch}/${shards}: ${violations.list.join("; ")}`);
      await closeRoom(clients);
      await sleep(1200);
      const per = calls.total / total;
      row.push(`${per.toFixed(2)} / ${(calls.fromSequencer / total).toFixed(2)}`);
      figures.push({ measure: `rooms cost: calls per message, batch ${ms}, ${shards} shards`, stat: "all calls", unit: "calls/msg", values: { dokit: per } });
      figures.push({ measure: `rooms cost: calls per message, batch ${ms}, ${shards} shards`, stat: "made by the sequencer", unit: "calls/msg", values: { dokit: calls.fromSequencer / total } });
      log(`rooms cost: batch ${ms}, ${shards} shards: ${describeCalls(calls, total)}`);
    }
    lines.push(`| ${ms} | ${row.join(" | ")} |`);
  }
  return { figures, lines };
}

/** Starts the rooms worker, runs the chaos run and the cost sweep, stops it. */
export async function roomsBench(settings: RoomsSettings, quick: boolean, log: (message: string) => void): Promise<{ figures: Figure[]; text: string }> {
  const worker = await startBenchWorker(new URL("./worker-rooms/wrangler.jsonc", import.meta.url).pathname);
  const run = Date.now().toString(36);
  try {
    const base = worker.direct;
    log(`rooms worker at ${base.href}`);
    const result = await chaos(base, settings, run, log);
    const cost = settings.noCost ? { figures: [], lines: [] } : await costSweep(base, run, quick, log);
    return { figures: [...result.figures, ...cost.figures], text: [...result.lines, "", ...cost.lines].join("\n") };
  } finally {
    await worker.dispose();
  }
}

/** @returns the rooms settings from the command line */
export function roomsSettings(quick: boolean): RoomsSettings {
  return {
    clients: Number(arg("rooms-clients", quick ? "400" : "2000")),
    shards: Number(arg("rooms-shards", "8")),
    publishers: Number(arg("rooms-publishers", "16")),
    messages: Number(arg("rooms-messages", quick ? "10" : "20")),
    faultRate: Number(arg("rooms-faults", "0.05")),
    strikeMs: Number(arg("rooms-strike-ms", "500")),
    noCost: process.argv.includes("--rooms-no-cost"),
    fanout: arg("rooms-fanout", "tree") === "flat" ? "flat" : "tree",
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.X_LOCAL_OBSERVABILITY ??= "false";
  process.env.WRANGLER_LOG ??= "none";
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const quick = process.argv.includes("--quick");
  const t0 = performance.now();
  const log = (message: string) => process.stderr.write(`[rooms ${((performance.now() - t0) / 1000).toFixed(0)}s] ${message}\n`);
  const { text, figures } = await roomsBench(roomsSettings(quick), quick, log);
  console.log(`\nRooms (dokit/rooms over many shards; bench/README.md)\n\n${text}`);
  console.log(`result file: ${recordFigures("rooms", "Rooms: chaos and cost", "bench/rooms.ts", figures).pathname}`);
}
