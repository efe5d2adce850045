// The in-process rooms bench (`pnpm bench --only=rooms-inproc`, or `node bench/rooms-inproc.ts` alone):
// the rooms-scale comparison (a 1 KB publish reaching every client, one plain dokit WebSockets object
// against the room over 8 and 16 shards) with the clients inside workerd. Objects of the rooms worker
// (`BenchHolder`, bench/worker-rooms/inproc.ts) open the WebSockets in-process, to the one object or
// through `routeRoomRequest` as a real client comes, and stamp each message's receipt with workerd's
// clock; the Worker reads the same clock right before it publishes. No kernel socket is made, so
// workerd's open-file limit (about 9,800 loopback connections here) does not bound the sizes.
//
// What differs from rooms-scale: no kernel sockets (no TCP, no syscalls per frame), and the clients'
// receive events run on workerd's thread, beside the objects that send, in every configuration.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import type { HolderStatus, OpenOptions, Receipts } from "./worker-rooms/inproc-types.ts";
import { arg, argList, quietWrangler } from "./lib/cli.ts";
import { cpuMs, PERF_V8_FLAGS, recordPerf, sleep, workerdPids } from "./lib/load.ts";
import { type Figure, median, quantile } from "./lib/stats.ts";
import { startBenchWorker } from "./lib/worker.ts";
import { recordFigures } from "./lib/results.ts";

/** Settings of the in-process measure; flags in brackets. */
export interface InprocSettings {
  /** Connection counts [`--inproc-sizes=`, 10000,20000,30000,40000; 1000,5000 with --quick]. */
  sizes: number[];
  /**
   * The rooms: 0 is the one object, N > 0 the room over N shards, −N the control: N plain objects
   * like the one object, each holding its part and blasted together, no room code between them
   * [`--inproc-shards=`, 0,8,16].
   */
  shards: number[];
  /** The one object's largest size: the platform's cap on one object's hibernating sockets [`--inproc-one-max=`, 32768]. */
  oneMax: number;
  /** Counted publishes per room and size [`--inproc-publishes=`, 10; 4 with --quick], after 2 not counted. */
  publishes: number;
  /** Size of the published data, as JSON [`--inproc-bytes=`, 1024]. */
  bytes: number;
  /** Objects holding the clients, each an equal part [`--inproc-holders=`, 16]. */
  holders: number;
  /** Connections each holder opens at once [`--inproc-parallel=`, 16]. */
  parallel: number;
  /** Connections a holder opens per call [`--inproc-chunk=`, 250]. */
  chunk: number;
  /** ms between one publish's last receipt and the next publish [`--inproc-gap=`, 300]. */
  gapMs: number;
  /**
   * workerd's clock [`--inproc-clock=`, io]: `precise` turns on the `precise_timers` compatibility
   * flag (experimental), so `Date.now()` reads the system clock at each call, to 3 ms; `io` keeps
   * the default clock, which moves only when workerd's event loop polls the OS.
   */
  clock: "precise" | "io";
  /** Where `perf record` writes a profile of workerd during each worker's counted publishes (`<prefix>-<rooms>-<size>.data`) [`--inproc-perf=`, none]. */
  perf: string;
  /**
   * Every room of a size in one worker, side by side, their publishes taken in turn, rather than
   * one room per fresh worker [`--inproc-paired`]: a drift of the machine between workers then
   * moves every room alike.
   */
  paired: boolean;
}

/** What one room measured at one size. */
interface Row {
  shards: number;
  label: string;
  size: number;
  /** Per counted publish: ms from the clock read before the publish until the last client's receipt. */
  last: number[];
  /** Per counted publish: the same until the first client's receipt. */
  first: number[];
  /** Every client's ms over the counted publishes. */
  each: number[];
  /** Per counted publish: ms from the driver's request until every holder answered that all had it (a check on workerd's clock). */
  roundTrip: number[];
  /** Per counted publish: workerd CPU ms from the request until every client had it (the clients' receipts included). */
  cpu: number[];
  /** workerd's resident set growth while the connections opened, per connection (KB): both ends of each. */
  rssKb: number;
  /** s to open every connection. */
  openS: number;
  /** Whether every connection heard the full room-wide count before the counted publishes (rooms only). */
  counted: boolean;
  /** Count frames the clients received during the counted publishes (none when the count is settled). */
  countFrames: number;
}

/** @returns the summed resident set of `pids`, in KB */
function rssKb(pids: readonly number[]): number {
  let kb = 0;
  for (const pid of pids) kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN);
  return kb;
}

/** @returns JSON data of exactly `bytes` bytes */
function payload(tag: number, bytes: number): string {
  const head = `{"p":${tag},"pad":"`;
  return `${head}${"x".repeat(Math.max(0, bytes - head.length - 2))}"}`;
}

/** Calls the Worker's `/inproc/<path>`, JSON in and out; throws on a status other than 200. */
async function call<T>(base: URL, path: string, body: unknown): Promise<T> {
  const response = await fetch(new URL(`/inproc/${path}`, base), { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });
  if (!response.ok) throw new Error(`rooms-inproc: /inproc/${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** A room whose connections are open, in a running worker. */
interface OpenRoom {
  shards: number;
  label: string;
  size: number;
  room: string;
  holders: string[];
  /** Each holder's instance when it opened its part: it must answer from the same one to the end. */
  instances: string[];
  row: Row;
  /** Count frames the clients had received when the counted publishes began. */
  countFrames0: number;
}

/** @returns every holder's status, each told the room's size */
function holderStatus(base: URL, room: OpenRoom | { holders: string[]; size: number }): Promise<HolderStatus[]> {
  return Promise.all(room.holders.map((h) => call<HolderStatus>(base, `status/${h}`, { size: room.size })));
}

/**
 * Opens `size` connections to one room: the one object (`shards` 0) or the room over that many
 * shards. The caller keeps the holders called every 10 s (`alive`: it adds this room's holders).
 */
async function openRoom(base: URL, pids: readonly number[], settings: InprocSettings, shards: number, size: number, run: string, alive: string[], log: (message: string) => void): Promise<OpenRoom> {
  const label = shards > 0 ? `${shards} shards` : shards < 0 ? `${-shards} plain objects` : "one object";
  const room = `inproc-${run}-${shards}-${size}`;
  const holders = Array.from({ length: settings.holders }, (_, h) => `${room}-h${h}`);
  await holderStatus(base, { holders, size }); // the holders exist before the resident set is read
  alive.push(...holders);
  const rss0 = rssKb(pids);
  log(`rooms-inproc: ${size} connections to ${label}: opening`);
  const t0 = performance.now();
  let first = 0;
  const opened = await Promise.all(
    holders.map(async (h, i) => {
      const count = Math.floor(size / holders.length) + (i < size % holders.length ? 1 : 0);
      const from = first;
      first += count;
      const total = { opened: 0, failed: 0, error: undefined as string | undefined, ms: 0, instance: "" };
      for (let done = 0; done < count; done += settings.chunk) {
        const options: OpenOptions = { room, shards, count: Math.min(settings.chunk, count - done), first: from + done, parallel: settings.parallel };
        const part = await call<{ opened: number; failed: number; error?: string; ms: number; instance: string }>(base, `open/${h}`, options);
        if (total.instance && part.instance !== total.instance) throw new Error(`rooms-inproc: holder ${h} was reset or evicted while opening (${total.instance}, then ${part.instance})`);
        total.instance = part.instance;
        total.opened += part.opened;
        total.failed += part.failed;
        total.error ??= part.error;
        total.ms += part.ms;
      }
      return total;
    }),
  );
  const openS = (performance.now() - t0) / 1000;
  const failed = opened.reduce((n, o) => n + o.failed, 0);
  if (failed) throw new Error(`rooms-inproc: ${failed} of ${size} connections to ${label} did not open (${opened.find((o) => o.error)?.error})`);
  const row: Row = { shards, label, size, last: [], first: [], each: [], roundTrip: [], cpu: [], rssKb: (rssKb(pids) - rss0) / size, openS, counted: shards <= 0, countFrames: 0 };
  log(`rooms-inproc: ${size} to ${label} open in ${openS.toFixed(1)} s; workerd RSS +${row.rssKb.toFixed(1)} KB per connection`);
  return { shards, label, size, room, holders, instances: opened.map((o) => o.instance), row, countFrames0: 0 };
}

/** Fails the run when a holder of `room` answers from another instance than the one that opened its part. */
async function checkInstances(base: URL, room: OpenRoom): Promise<void> {
  const replaced = (await holderStatus(base, room)).map((s, h) => [room.instances[h], s.instance]).filter(([before, after]) => before !== after);
  if (replaced.length) throw new Error(`rooms-inproc: ${replaced.length} holders of ${room.label} were reset or evicted after they opened their connections (${replaced.slice(0, 3).map(([b, a]) => `${b} → ${a}`).join(", ")})`);
}

/**
 * Publishes `seq` to the room and waits until every client has it; from the third publish on, its
 * times are counted in the room's row. After the second, a room over shards waits until every
 * connection heard the full room-wide count (the count frames go out within the shards' countMs of
 * a change), so no count frame is sent during a counted publish.
 */
async function publishRound(base: URL, pids: readonly number[], room: OpenRoom, seq: number, settings: InprocSettings): Promise<void> {
  const { row, holders, size, label } = room;
  const waits = holders.map((h) => call<number>(base, `wait/${h}`, { seq, ms: 120_000 }));
  await sleep(50); // the waits are in place
  const cpu0 = cpuMs(pids);
  const sent = performance.now();
  const published = await call<{ start: number; seq: number }>(base, room.shards > 0 ? `publish/room/${room.room}` : room.shards < 0 ? `publish/plain/${room.room}?n=${-room.shards}` : `publish/single/${room.room}`, payload(seq, settings.bytes));
  if (published.seq !== seq) throw new Error(`rooms-inproc: publish ${seq} to ${label} got seq ${published.seq}`);
  const each = await Promise.all(waits);
  const received = each.reduce((n, r) => n + r, 0);
  const roundTrip = performance.now() - sent;
  const cpu = cpuMs(pids) - cpu0;
  if (received !== size) {
    const held = (await holderStatus(base, room)).map((s, h) => `${each[h]} of ${s.sockets} (${s.lost} lost; ${s.instance}, opened by ${room.instances[h]})`).join(", ");
    throw new Error(`rooms-inproc: publish ${seq} reached ${received} of ${size} clients of ${label} after ${roundTrip.toFixed(0)} ms; by holder: ${held}`);
  }
  const receipts = (await Promise.all(holders.map((h) => call<Receipts[]>(base, `report/${h}`, { seqs: [seq] })))).flat();
  const times = receipts.flatMap((r) => r.times);
  if (times.length !== size) throw new Error(`rooms-inproc: publish ${seq}: ${times.length} receipts of ${size} clients of ${label}`);
  if (seq > 2) {
    let last = Number.NEGATIVE_INFINITY;
    let firstAt = Number.POSITIVE_INFINITY;
    for (const at of times) {
      const ms = at - published.start;
      row.each.push(ms);
      if (ms > last) last = ms;
      if (ms < firstAt) firstAt = ms;
    }
    row.last.push(last);
    row.first.push(firstAt);
    row.roundTrip.push(roundTrip);
    row.cpu.push(cpu);
  }
  if (room.shards > 0 && seq === 2) {
    row.counted = await countedBy(() => holderStatus(base, room), size, 15_000);
    room.countFrames0 = (await holderStatus(base, room)).reduce((n, s) => n + s.countFrames, 0);
  }
  await sleep(settings.gapMs);
}

/** Checks that no connection of the room closed and no frame came twice, logs its figures, closes its connections. @returns its row */
async function closeRoom(base: URL, room: OpenRoom, log: (message: string) => void): Promise<Row> {
  const { row, label, size } = room;
  const held = await holderStatus(base, room);
  const lost = held.reduce((n, s) => n + s.lost, 0);
  const duplicates = held.reduce((n, s) => n + s.duplicates, 0);
  row.countFrames = held.reduce((n, s) => n + s.countFrames, 0) - room.countFrames0;
  if (lost || duplicates) throw new Error(`rooms-inproc: ${label} at ${size}: ${lost} connections closed, ${duplicates} frames received twice or out of order`);
  log(
    `rooms-inproc: ${size} ${label}: last client p50 ${quantile(row.last, 0.5).toFixed(0)} ms, p99 ${quantile(row.last, 0.99).toFixed(0)} ms; CPU ${median(row.cpu).toFixed(0)} ms per message; ${row.countFrames} count frames during the counted publishes`,
  );
  const closed = (await Promise.all(room.holders.map((h) => call<number>(base, `close/${h}`, {})))).reduce((n, c) => n + c, 0);
  if (closed !== size) log(`rooms-inproc: closed ${closed} of ${size}`);
  return row;
}

/**
 * Measures rooms at one size in one fresh worker: one room alone, or (`paired`) every room of the
 * size opened side by side, their publishes taken in turn (the first room of each round rotates).
 */
async function measure(settings: InprocSettings, rooms: number[], size: number, run: string, log: (message: string) => void): Promise<Row[]> {
  const worker = await startBenchWorker(new URL("./worker-rooms/wrangler.jsonc", import.meta.url).pathname, {
    ...(settings.clock === "precise" && { compatibilityFlags: ["precise_timers"] }),
    ...(settings.perf && { v8Flags: PERF_V8_FLAGS }),
  });
  try {
    const base = worker.direct;
    const pids = workerdPids();
    // workerd evicts an object that had no request for about 70 s (measured: idle 80 s and more,
    // evicted; 70 s and less, kept), open client WebSockets or not, and its sockets close with it.
    // Opening a room of 30,000 takes 7 to 20 s, and holders that opened their part in one call of
    // minutes were all replaced by the end (called every 10 s or not): each holder opens its part
    // in calls of `chunk` connections, and every holder is called every 10 s until the publishes.
    const alive: string[] = [];
    const keepAlive = setInterval(() => void Promise.all(alive.map((h) => call(base, `status/${h}`, { size }))).catch(() => {}), 10_000);
    const open: OpenRoom[] = [];
    try {
      for (const shards of rooms) open.push(await openRoom(base, pids, settings, shards, size, run, alive, log));
      await sleep(1_500); // the joins' count reports
    } finally {
      clearInterval(keepAlive);
    }
    for (const room of open) await checkInstances(base, room);
    let perf: { stop(): Promise<void> } | undefined;
    for (let round = 0; round < settings.publishes + 2; round++) {
      // `perf record` of workerd over the counted publishes only.
      if (round === 2 && settings.perf) perf = await recordPerf(pids, `${settings.perf}-${rooms.map((r) => r || "one").join("+")}-${size}.data`, 999, 2_000);
      for (let i = 0; i < open.length; i++) await publishRound(base, pids, open[(i + round) % open.length] as OpenRoom, round + 1, settings);
    }
    await perf?.stop();
    const rows: Row[] = [];
    for (const room of open) rows.push(await closeRoom(base, room, log));
    return rows;
  } finally {
    await worker.dispose();
  }
}

/** @returns once every holder's connections all heard `size` as the room-wide count (true), or after `ms` (false) */
async function countedBy(status: () => Promise<HolderStatus[]>, size: number, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if ((await status()).reduce((n, s) => n + s.counted, 0) === size) return true;
    await sleep(250);
  }
  return false;
}

/** Runs every room at every size. @returns the figures (the room in the dokit column, the one object in the raw column) and the report's text */
export async function roomsInprocBench(settings: InprocSettings, log: (message: string) => void): Promise<{ figures: Figure[]; text: string }> {
  const run = Date.now().toString(36);
  const rows: Row[] = [];
  const skipped: string[] = [];
  const loads: number[] = [];
  for (const size of settings.sizes) {
    const rooms = settings.shards.filter((shards) => shards > 0 || size <= settings.oneMax);
    if (rooms.length < settings.shards.length) {
      skipped.push(`${size.toLocaleString("en")} connections to the one object: not run, over --inproc-one-max (${settings.oneMax.toLocaleString("en")}, the platform's cap on one object's hibernating sockets)`);
    }
    for (const group of settings.paired ? [rooms] : rooms.map((shards) => [shards])) {
      rows.push(...(await measure(settings, group, size, run, log)));
      loads.push(os.loadavg()[0] ?? Number.NaN);
      await sleep(1_000);
    }
  }
  const figures = inprocFigures(rows, settings);
  const text = report(rows, skipped, settings, loads);
  const out = new URL("./results/", import.meta.url);
  mkdirSync(out, { recursive: true });
  const summary = rows.map(({ each, ...row }) => ({ ...row, eachP50: quantile(each, 0.5), eachP99: quantile(each, 0.99) }));
  writeFileSync(new URL("latest-rooms-inproc.json", out), `${JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, settings, rows: summary, skipped, figures }, null, 2)}\n`);
  return { figures, text };
}

/** The figures for `pnpm bench`'s table: the one object in the raw column, the room in the dokit column. */
function inprocFigures(rows: Row[], settings: InprocSettings): Figure[] {
  const figures: Figure[] = [];
  for (const row of rows.filter((r) => r.shards !== 0)) {
    const one = rows.find((r) => r.size === row.size && r.shards === 0);
    for (const q of [0.5, 0.99]) {
      figures.push({
        measure: `rooms in-process: 1 KB to all ${row.size}, ${row.label} (raw = one object)`,
        stat: `last client p${q * 100}`,
        unit: "ms",
        values: { dokit: quantile(row.last, q), ...(one && { raw: quantile(one.last, q) }) },
        samples: { dokit: row.last.length, ...(one && { raw: one.last.length }) },
        ...(one && row.shards > 0 && { target: 1.3 }),
        note: settings.paired ? "paired: the rooms side by side, publishes in turn" : "alone: one room per worker",
      });
    }
  }
  return figures;
}

const f1 = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : "-");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");

/** The report's text: one line per room and size. */
function report(rows: Row[], skipped: string[], settings: InprocSettings, loads: number[]): string {
  const lines = [
    `${os.cpus().length} cores, one workerd process holding both ends of every connection (${settings.holders} holder objects per room); ${settings.paired ? "the rooms of a size side by side in one fresh worker, their publishes in turn" : "a fresh worker for each room and size"}; 1-minute load average after each: ${loads.map((l) => l.toFixed(1)).join(", ")}.`,
    "",
    `Fan-out of ${settings.bytes} bytes of data published from the Worker, from workerd's clock read right before the publish until the last client's receipt (ms; ${settings.publishes} publishes per room and size, p50 / p99 over them), each client's own receipt (p50 / p99 over every client of every publish), the ratio to the one object (p50, p99), the driver's round trip (request → every holder answered, median; a check on workerd's clock), workerd CPU per message (median; the clients' receive events included), and workerd's resident set growth per connection (both ends):`,
    "",
    "| connections | room | last client p50 / p99 | first client | each client p50 / p99 | vs one object p50 / p99 | round trip | workerd CPU per message | per connection | workerd RSS per connection | opened in |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const one = rows.find((r) => r.size === row.size && r.shards === 0);
    const cpu = median(row.cpu);
    const vs = row.shards !== 0 && one ? `${f2(quantile(row.last, 0.5) / quantile(one.last, 0.5))}× / ${f2(quantile(row.last, 0.99) / quantile(one.last, 0.99))}×` : "";
    lines.push(
      `| ${row.size.toLocaleString("en")} | ${row.label}${row.counted ? "" : " (count not settled)"} | ${f1(quantile(row.last, 0.5))} / ${f1(quantile(row.last, 0.99))} | ${f1(median(row.first))} | ${f1(quantile(row.each, 0.5))} / ${f1(quantile(row.each, 0.99))} | ${vs} | ${f1(median(row.roundTrip))} | ${f1(cpu)} ms | ${f2((cpu * 1000) / row.size)} µs | ${f1(row.rssKb)} KB | ${row.openS.toFixed(1)} s |`,
    );
  }
  if (skipped.length) lines.push("", ...skipped.map((s) => `- ${s}`));
  return lines.join("\n");
}

/** @returns the in-process settings from the command line */
export function inprocSettings(quick: boolean): InprocSettings {
  return {
    sizes: argList("inproc-sizes", quick ? "1000,5000" : "10000,20000,30000,40000"),
    shards: argList("inproc-shards", "0,8,16"),
    oneMax: Number(arg("inproc-one-max", "32768")),
    publishes: Number(arg("inproc-publishes", quick ? "4" : "10")),
    bytes: Number(arg("inproc-bytes", "1024")),
    holders: Number(arg("inproc-holders", "16")),
    parallel: Number(arg("inproc-parallel", "16")),
    chunk: Number(arg("inproc-chunk", "250")),
    gapMs: Number(arg("inproc-gap", "300")),
    clock: arg("inproc-clock", "io") === "precise" ? "precise" : "io",
    perf: arg("inproc-perf", ""),
    paired: process.argv.includes("--inproc-paired"),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  quietWrangler();
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const t0 = performance.now();
  const log = (message: string) => process.stderr.write(`[rooms-inproc ${((performance.now() - t0) / 1000).toFixed(0)}s] ${message}\n`);
  const { text, figures } = await roomsInprocBench(inprocSettings(process.argv.includes("--quick")), log);
  console.log(`\nRooms at scale, clients in-process (bench/rooms-inproc.ts; bench/MEASURES.md)\n\n${text}\n\nresults: bench/results/latest-rooms-inproc.json`);
  console.log(`result file: ${recordFigures("rooms-inproc", "Rooms at scale, clients in-process", "bench/rooms-inproc.ts", figures).pathname}`);
}
