// The rooms scale bench (`pnpm bench --only=rooms-scale`, or `node bench/rooms-scale.ts` alone), on the
// rooms worker (bench/worker-rooms/): a 1 KB message published from the Worker (an HTTP request to it,
// which calls `publishToRoom`) reaching every client of one logical room over 8 and 16 shards, against
// one plain dokit WebSockets object holding all the connections and broadcasting the same frame
// (the Worker calls its `blast`), triggered the same way. Per publish: the time from the request
// until the LAST client has the frame, and each client's own delivery time; workerd's CPU time and
// resident memory. Connection counts form a curve, drawn as an SVG. Then the cost model's inputs:
// one call between two objects (DO RPC and fetch).
//
// The clients live in several forked processes (lib/fan-clients.ts), each stamping receipts with the
// machine's monotonic clock, shared by every process. workerd holds every server socket in one
// process, so its open-file limit bounds the connections open at once (read at start; sizes above it
// are reported as not run). With `--scale-hosts=K` the room is measured once more with its shards in
// K workerd processes (lib/room-hosts.ts), each under its own limit: the way to 40,000 here.
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { arg, argList } from "./lib/cli.ts";
import { clock, type FromClients, type ToClients } from "./lib/fan-clients.ts";
import { cpuMs, PERF_V8_FLAGS, recordPerf, sleep, workerdPids } from "./lib/load.ts";
import { type Figure, median, quantile } from "./lib/stats.ts";
import { startRoomHosts } from "./lib/room-hosts.ts";
import { startBenchWorker } from "./lib/worker.ts";
import { recordFigures } from "./lib/results.ts";

/** Settings of the scale measure; `pnpm bench` flags in brackets. */
export interface ScaleSettings {
  /** Connection counts of the curve [`--scale-sizes=`, 1000,5000,10000,20000,30000,40000; 1000,5000 with --quick]. */
  sizes: number[];
  /** Shard counts of the room [`--scale-shards=`, 8,16]. */
  shards: number[];
  /** The one object's largest size: the platform's cap on one object's hibernating sockets [`--scale-one-max=`, 32768]. */
  oneMax: number;
  /** Counted publishes per room and size [`--scale-publishes=`, 10; 4 with --quick], after 2 not counted. */
  publishes: number;
  /** Size of the published data, as JSON [`--scale-bytes=`, 1024]. */
  bytes: number;
  /** Client processes [`--scale-procs=`, 2]. */
  procs: number;
  /** Sockets being opened at once, per client process [`--scale-parallel=`, 64]. */
  parallel: number;
  /** Calls of the object-to-object measure, per mode [`--scale-calls=`, 2000]. */
  calls: number;
  /** Where the chart goes [`--scale-svg=`, bench/rooms-scale.svg; `--scale-svg=` with no value: none]. */
  svg: string;
  /** Also the one object sending connection by connection over `getConnections()`, and broadcasting after a SQLite write, as a shard's delivery does [`--scale-loop`]. */
  loop: boolean;
  /** Also one room whose shards live in this many workerd processes, a host per process, and its sequencer in one more [`--scale-hosts=`, 0: none]. */
  hosts: number;
  /** Connection counts of the many-process room [`--scale-hosts-sizes=`, 40000]. */
  hostsSizes: number[];
  /** Where `perf record` writes a profile of workerd during each group's publishes (`<prefix>-<rooms>-<size>.data`) [`--scale-perf=`, none]. */
  perf: string;
}

/** One room under test: the one object, or the room over `shards` shards. */
interface Config {
  key: string;
  label: string;
  shards: number;
  /** The Worker's publish route: `/blast/<blast>/<room>`. */
  blast: "single" | "single-loop" | "single-stored" | "room" | "hosts";
  /** The workerd processes the room's shards are spread over (lib/room-hosts.ts); absent: one process holds everything. */
  hosts?: number;
}

/** What one room measured at one size. */
interface Row {
  config: Config;
  size: number;
  /** Per counted publish: ms from the request until the last client had it. */
  last: number[];
  /** Per counted publish: ms from the request until the first client had it (the path before the sends). */
  first: number[];
  /** Every client's ms from the request to its receipt, over the counted publishes. */
  each: number[];
  /** Per counted publish: workerd CPU ms from the request until the last client had it. */
  cpu: number[];
  /** Per counted publish: the client processes' CPU ms over the same time. */
  clientCpu: number[];
  /** workerd's resident set growth while these connections opened, per connection (KB); NaN when not measured alone. */
  rssKb: number;
  /** The client processes' resident set growth, per connection (KB). */
  clientRssKb: number;
  /** ms per connection to open them. */
  openMs: number;
  /** Whether the rooms of this size ran side by side, publishes alternating (else one after another). */
  alternated: boolean;
}

const CLIENT = new URL("./lib/fan-clients.ts", import.meta.url).pathname;

/** Sockets per loopback source address: ports enough, also with the previous runs' sockets in TIME_WAIT. */
const PER_ADDRESS = 10_000;

/** Files workerd holds open per WebSocket connection (Linux, workerd 1.20261117: the socket twice). */
const FILES_PER_CONNECTION = 2;

/** @returns the soft open-file limit of `pid` (this process: `self`) */
function openFileLimit(pid: number | "self"): number {
  const line = readFileSync(`/proc/${pid}/limits`, "utf8").split("\n").find((l) => l.startsWith("Max open files"));
  return Number(line?.split(/\s+/)[3] ?? Number.NaN);
}

/** @returns the summed resident set of `pids`, in KB */
function rssKb(pids: readonly number[]): number {
  let kb = 0;
  for (const pid of pids) kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN);
  return kb;
}

/** The forked client processes, and the sockets each holds. */
class Clients {
  readonly children: ChildProcess[] = [];
  readonly held: number[] = [];
  /** Each returns true once it has every answer it waits for (and is then dropped). */
  #waiters: ((message: FromClients, child: number) => boolean)[] = [];
  #lost = 0;
  #socket = 0;

  constructor(count: number) {
    for (let i = 0; i < count; i++) {
      const child = fork(CLIENT, [], { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
      child.on("message", (message: FromClients) => {
        if (message.op === "lost") this.#lost += message.count;
        this.#waiters = this.#waiters.filter((waiter) => !waiter(message, i));
      });
      this.children.push(child);
      this.held.push(0);
    }
  }

  get lost(): number {
    return this.#lost;
  }

  /** @returns once `accept` has taken `count` answers (it returns true for those it takes); throws after `ms` */
  collect(count: number, accept: (message: FromClients, child: number) => boolean, ms: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      let left = count;
      if (left === 0) return resolve();
      const timer = setTimeout(() => reject(new Error(`rooms-scale: timed out: ${what} (${left} of ${count} answers missing)`)), ms);
      this.#waiters.push((message, child) => {
        if (!accept(message, child) || --left > 0) return false;
        clearTimeout(timer);
        resolve();
        return true;
      });
    });
  }

  /** Opens `count` sockets of a population, dealt round-robin over the processes. @returns ms taken, and the processes' RSS growth (KB) */
  async open(population: string, url: (i: number) => string, ready: string, count: number, parallel: number): Promise<{ ms: number; clientKb: number }> {
    const lists = this.children.map(() => [] as { url: string; local?: string }[]);
    for (let i = 0; i < count; i++) {
      const local = `127.0.0.${2 + Math.floor(this.#socket++ / PER_ADDRESS)}`;
      lists[i % lists.length]!.push({ url: url(i), local });
    }
    if (this.#socket / PER_ADDRESS > 250) throw new Error("rooms-scale: out of loopback source addresses");
    let failed = 0;
    let clientKb = 0;
    const start = performance.now();
    const done = this.collect(
      this.children.length,
      (m, child) => {
        if (m.op !== "opened" || m.population !== population) return false;
        failed += m.failed;
        this.held[child]! += m.count;
        clientKb += (m.rssAfter - m.rssBefore) / 1024;
        return true;
      },
      600_000,
      `opening ${population}`,
    );
    this.children.forEach((child, i) => child.send({ op: "open", population, sockets: lists[i]!, ready, parallel } satisfies ToClients));
    await done;
    if (failed) throw new Error(`rooms-scale: ${failed} of ${count} sockets of ${population} did not open`);
    return { ms: performance.now() - start, clientKb };
  }

  async close(population: string, counts: number[]): Promise<void> {
    const done = this.collect(this.children.length, (m) => m.op === "closed" && m.population === population, 120_000, `closing ${population}`);
    this.children.forEach((child, i) => {
      this.held[i]! -= counts[i] ?? 0;
      child.send({ op: "close", population } satisfies ToClients);
    });
    await done;
  }

  dispose(): void {
    for (const child of this.children) child.kill();
  }
}

/** @returns JSON data of exactly `bytes` bytes, tagged `"p":tag` first (the clients find the tag there) */
function payload(tag: number, bytes: number): string {
  const head = `{"p":${tag},"pad":"`;
  return `${head}${"x".repeat(Math.max(0, bytes - head.length - 2))}"}`;
}

/** Runs every measure. @returns the figures, the report's text and the rows (for the chart) */
export async function roomsScaleBench(settings: ScaleSettings, log: (message: string) => void): Promise<{ figures: Figure[]; text: string }> {
  // A fresh worker for each group of rooms: its resident set then grows by what the group's
  // connections take, not into pages an earlier group freed.
  const startWorker = async (): Promise<{ worker: { dispose(): Promise<void> }; base: URL; pids: number[]; hosts: URL[] }> => {
    const worker = await startBenchWorker(new URL("./worker-rooms/wrangler.jsonc", import.meta.url).pathname, settings.perf ? { v8Flags: PERF_V8_FLAGS } : {});
    return { worker, base: worker.direct, pids: workerdPids(), hosts: [] };
  };
  let { worker, base, pids, hosts } = await startWorker();
  const clients = new Clients(settings.procs);
  const run = Date.now().toString(36);
  try {
    const workerdFiles = Math.min(...pids.map((pid) => openFileLimit(pid)));
    const clientFiles = openFileLimit("self");
    // workerd holds two files per WebSocket (measured: 18,139 open at 9,000 connections); 400 left
    // for its own (listening sockets, SQLite, pipes).
    const budget = Math.floor((workerdFiles - 400) / FILES_PER_CONNECTION);
    log(`rooms-scale: workerd may open ${workerdFiles} files, each client process ${clientFiles}; ${settings.procs} client processes`);
    log("rooms-scale: object-to-object calls");
    const calls = await callCost(base, pids, settings.calls);
    const configs: Config[] = [
      { key: "one", label: "one object", shards: 0, blast: "single" },
      ...(settings.loop
        ? ([
            { key: "loop", label: "one object, getConnections()", shards: 0, blast: "single-loop" },
            { key: "stored", label: "one object, a SQLite write first", shards: 0, blast: "single-stored" },
          ] as const)
        : []),
      ...settings.shards.map((s) => ({ key: `r${s}`, label: `${s} shards`, shards: s, blast: "room" }) as const),
    ];
    const rows: Row[] = [];
    const skipped: string[] = [];
    /** The machine's 1-minute load average after each group (other work on the machine shows here). */
    const loads: number[] = [];
    let tag = 0;

    // Client i goes to shard i modulo the shards; in the many-process room, straight to the host
    // that holds that shard (shard j on host j modulo the hosts).
    const urlOf = (config: Config, room: string) => (i: number) => {
      const shard = config.shards ? i % config.shards : 0;
      const u = config.hosts ? new URL(`/room/${room}`, hosts[shard % config.hosts]) : new URL(config.shards ? `/room/b10/${room}` : `/single/${room}`, base);
      u.protocol = "ws:";
      u.searchParams.set("_pk", `c${i}`);
      if (config.shards) u.searchParams.set("shards", String(config.shards));
      if (config.hosts) u.searchParams.set("shard", String(shard));
      return u.href;
    };

    /** Publishes once to a room and waits until every client has it. @returns ms until the last, every client's ms, workerd CPU ms */
    const clientPids = clients.children.map((child) => child.pid as number);
    const publish = async (config: Config, room: string, size: number): Promise<{ last: number; first: number; each: Float64Array; cpu: number; clientCpu: number }> => {
      const t = ++tag;
      const holders = clients.held.filter((h) => h > 0).length;
      const times: Float64Array[] = [];
      const lostBefore = clients.lost;
      const got = clients.collect(holders, (m) => m.op === "got" && m.tag === t && Boolean(times.push(m.times)), 60_000, `publish ${t} to ${config.label} (${size})`);
      const cpu0 = cpuMs(pids);
      const clientCpu0 = cpuMs(clientPids);
      const t0 = clock();
      const route = config.hosts ? `/publish/${room}` : `/blast/${config.blast}/${room}`;
      const response = await fetch(new URL(route, base), { method: "POST", body: payload(t, settings.bytes) });
      if (!response.ok) throw new Error(`rooms-scale: publish ${t}: ${response.status} ${await response.text()}`);
      await got;
      const cpu = cpuMs(pids) - cpu0;
      const clientCpu = cpuMs(clientPids) - clientCpu0;
      if (clients.lost !== lostBefore) throw new Error(`rooms-scale: ${clients.lost - lostBefore} sockets closed during a publish`);
      const received = times.reduce((n, list) => n + list.length, 0);
      if (received !== size) throw new Error(`rooms-scale: publish ${t} reached ${received} of ${size} clients`);
      const each = new Float64Array(size);
      let k = 0;
      let last = 0;
      let first = Number.POSITIVE_INFINITY;
      for (const list of times) {
        for (const at of list) {
          const ms = (each[k++] = at - t0);
          last = Math.max(last, ms);
          first = Math.min(first, ms);
        }
      }
      return { last, first, each, cpu, clientCpu };
    };

    /** Opens each room of a group, publishes to them in turn (alternating), records the rows and closes them. */
    const measure = async (group: Config[], size: number, together: boolean): Promise<void> => {
      const opened = new Map<string, { row: Row; room: string; counts: number[] }>();
      for (const config of group) {
        const room = `scale-${run}-${config.key}-${size}`;
        const rss0 = rssKb(pids);
        const held0 = [...clients.held];
        log(`rooms-scale: ${size} connections to ${config.label}: opening`);
        const { ms, clientKb } = await clients.open(room, urlOf(config, room), config.shards ? "dokit_room_welcome" : "", size, settings.parallel);
        await sleep(1_500); // the joins' count reports
        const row: Row = { config, size, last: [], first: [], each: [], cpu: [], clientCpu: [], rssKb: (rssKb(pids) - rss0) / size, clientRssKb: clientKb / size, openMs: ms / size, alternated: together && group.length > 1 };
        opened.set(config.key, { row, room, counts: clients.held.map((h, i) => h - (held0[i] ?? 0)) });
        log(`rooms-scale: ${size} to ${config.label} open in ${(ms / 1000).toFixed(1)} s; workerd RSS +${row.rssKb.toFixed(1)} KB per connection`);
      }
      const order = [...opened.values()];
      // `perf record` of workerd over the publishes (not the opening), one file per group.
      const perf = settings.perf ? await recordPerf(pids, `${settings.perf}-${group.map((c) => c.key).join("-")}-${size}.data`, 1999, 2_000) : undefined;
      for (let round = 0; round < settings.publishes + 2; round++) {
        for (let k = 0; k < order.length; k++) {
          const { row, room } = order[(round + k) % order.length]!;
          const result = await publish(row.config, room, size);
          if (round >= 2) {
            row.last.push(result.last);
            row.first.push(result.first);
            row.cpu.push(result.cpu);
            row.clientCpu.push(result.clientCpu);
            for (const ms of result.each) row.each.push(ms);
          }
          await sleep(150);
        }
      }
      await perf?.stop();
      for (const { row, room, counts } of order) {
        rows.push(row);
        log(`rooms-scale: ${size} ${row.config.label}: last client p50 ${quantile(row.last, 0.5).toFixed(1)} ms, p99 ${quantile(row.last, 0.99).toFixed(1)} ms; CPU ${median(row.cpu).toFixed(1)} ms per message`);
        await clients.close(room, counts);
      }
    };

    // Sizes past what workerd may hold are reported as not run, and the largest that fits (in 500s) is measured instead.
    const fits = settings.sizes.filter((size) => size <= budget);
    const sizes = fits.length < settings.sizes.length ? [...fits, Math.floor(budget / 500) * 500].filter((v, i, all) => all.indexOf(v) === i) : fits;
    for (const size of settings.sizes.filter((size) => size > budget)) {
      skipped.push(`${size.toLocaleString("en")} connections: not run; workerd may open ${workerdFiles.toLocaleString("en")} files (its open-file limit) and holds ${FILES_PER_CONNECTION} per connection, so at most ${budget.toLocaleString("en")} connections at once`);
      log(`rooms-scale: ${size} connections skipped (workerd's open-file limit is ${workerdFiles})`);
    }
    for (const size of sizes) {
      const here = configs.filter((c) => c.shards > 0 || size <= settings.oneMax);
      if (Math.ceil(size / settings.procs) > clientFiles - 200) {
        skipped.push(`${size.toLocaleString("en")} connections: not run, ${settings.procs} client processes of ${clientFiles} files each are too few (raise --scale-procs)`);
        continue;
      }
      // Side by side when every room of this size fits under the budget at once: the publishes alternate.
      const together = size * here.length <= budget;
      const groups = together ? [here] : here.map((c) => [c]);
      for (const group of groups) {
        await worker.dispose();
        ({ worker, base, pids, hosts } = await startWorker());
        await measure(group, size, together);
        loads.push(os.loadavg()[0]!);
        await sleep(1_000);
      }
    }
    // The many-process room: its shards spread over `settings.hosts` workerd processes (each under
    // its own open-file limit), fresh processes for each room.
    for (const size of settings.hosts > 0 ? settings.hostsSizes : []) {
      for (const shards of settings.shards) {
        const config: Config = { key: `h${shards}`, label: `${shards} shards in ${settings.hosts} processes`, shards, blast: "hosts", hosts: settings.hosts };
        const onHost = Array.from({ length: settings.hosts }, (_, h) => Array.from({ length: size }, (_, i) => i % shards).filter((j) => j % settings.hosts === h).length);
        if (Math.max(...onHost) > budget || Math.ceil(size / settings.procs) > clientFiles - 200) {
          skipped.push(`${size.toLocaleString("en")} connections over ${config.label}: not run; the busiest process would hold ${Math.max(...onHost).toLocaleString("en")} (at most ${budget.toLocaleString("en")}), each of ${settings.procs} client processes ${Math.ceil(size / settings.procs).toLocaleString("en")} (at most ${(clientFiles - 200).toLocaleString("en")})`);
          continue;
        }
        await worker.dispose();
        const started = await startRoomHosts(settings.hosts);
        ({ worker, base, pids, hosts } = { worker: started, base: started.coordinator, pids: started.pids, hosts: started.hosts });
        log(`rooms-scale: ${settings.hosts} host processes (${onHost.join(", ")} connections) and a coordinator started`);
        await measure([config], size, false);
        loads.push(os.loadavg()[0]!);
        await sleep(1_000);
      }
    }
    const figures = scaleFigures(rows);
    const text = report(rows, calls, skipped, settings, loads);
    if (settings.svg) writeFileSync(settings.svg, chart(rows, settings));
    return { figures, text };
  } finally {
    clients.dispose();
    await worker.dispose();
  }
}

/** The cost of one call between two objects: per mode, the median of the groups' mean ms per call, and workerd CPU µs per call. */
async function callCost(base: URL, pids: number[], calls: number): Promise<{ mode: string; ms: number; p90: number; cpuUs: number }[]> {
  const out = [];
  for (const mode of ["rpc", "fetch"]) {
    await (await fetch(new URL(`/pair?mode=${mode}&calls=200&group=100`, base))).text(); // warm-up
    const cpu0 = cpuMs(pids);
    const means = (await (await fetch(new URL(`/pair?mode=${mode}&calls=${calls}&group=100`, base))).json()) as number[];
    const cpu = cpuMs(pids) - cpu0;
    out.push({ mode, ms: median(means), p90: quantile(means, 0.9), cpuUs: (cpu * 1000) / calls });
  }
  return out;
}

/** The figures for `pnpm bench`'s table: the one object in the raw column, the room in the dokit column. */
function scaleFigures(rows: Row[]): Figure[] {
  const figures: Figure[] = [];
  for (const row of rows.filter((r) => r.config.shards > 0)) {
    const one = rows.find((r) => r.size === row.size && r.config.key === "one");
    const measure = `rooms scale: 1 KB to all ${row.size}, ${row.config.label} (raw = one object)`;
    for (const q of [0.5, 0.99]) {
      figures.push({
        measure,
        stat: `last client p${q * 100}`,
        unit: "ms",
        values: { dokit: quantile(row.last, q), ...(one && { raw: quantile(one.last, q) }) },
        samples: { dokit: row.last.length, ...(one && { raw: one.last.length }) },
        ...(one && { target: 1.3 }),
        ...(one && !row.alternated && { note: "not alternated: one room after the other" }),
      });
    }
  }
  return figures;
}

const f1 = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : "-");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");

/** The report's text: the fan-out table, the per-connection costs, the cost model's inputs. */
function report(rows: Row[], calls: Awaited<ReturnType<typeof callCost>>, skipped: string[], settings: ScaleSettings, loads: number[]): string {
  const lines = [
    `${os.cpus().length} cores, one workerd process${settings.hosts > 0 ? ` (the many-process room: ${settings.hosts} host processes holding its shards and the connections, and one coordinator holding its sequencer; workerd CPU and RSS summed over them)` : ""}, ${settings.procs} client processes on the same machine; 1-minute load average after each group of rooms: ${loads.map((l) => l.toFixed(1)).join(", ")}.`,
    "",
    `Fan-out of ${settings.bytes} bytes of data published from the Worker, until the last client has it (ms; ${settings.publishes} publishes per room and size, p50 / p99 over them), each client's own delivery (p50 / p99 over every client of every publish), workerd CPU per message (median), and the ratio to the one object (p50, p99); the first client's time (median) is the path before the sends:`,
    "",
    "| connections | room | last client p50 / p99 | first client | each client p50 / p99 | vs one object p50 / p99 | workerd CPU per message | per shard | per connection | clients' CPU per message | workerd RSS per connection | clients' RSS per connection | opened |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const row of rows) {
    const one = rows.find((r) => r.size === row.size && r.config.key === "one");
    const cpu = median(row.cpu);
    const vs = row.config.key !== "one" && one ? `${f2(quantile(row.last, 0.5) / quantile(one.last, 0.5))}× / ${f2(quantile(row.last, 0.99) / quantile(one.last, 0.99))}×` : "";
    lines.push(
      `| ${row.size.toLocaleString("en")} | ${row.config.label} | ${f1(quantile(row.last, 0.5))} / ${f1(quantile(row.last, 0.99))} | ${f1(median(row.first))} | ${f1(quantile(row.each, 0.5))} / ${f1(quantile(row.each, 0.99))} | ${vs} | ${f1(cpu)} ms | ${row.config.shards ? `${f2(cpu / row.config.shards)} ms` : ""} | ${f2((cpu * 1000) / row.size)} µs | ${f1(median(row.clientCpu))} ms | ${f1(row.rssKb)} KB | ${f1(row.clientRssKb)} KB | ${row.alternated ? "side by side" : "alone"}, ${f2(row.openMs)} ms each |`,
    );
  }
  lines.push("", ...skipped.map((s) => `- ${s}`));
  lines.push("", "Cost model inputs (this machine):", "");
  for (const c of calls) lines.push(`- one ${c.mode === "rpc" ? "DO RPC call" : "fetch"} between two objects: ${c.ms.toFixed(3)} ms (p50 of groups of 100 calls one after another; p90 ${c.p90.toFixed(3)}), workerd CPU ${c.cpuUs.toFixed(1)} µs per call (both objects)`);
  const biggestOne = rows.filter((r) => r.config.key === "one").at(-1);
  if (biggestOne) lines.push(`- one 1 KB socket send, from the one object at ${biggestOne.size.toLocaleString("en")} connections: ${f2((median(biggestOne.cpu) * 1000) / biggestOne.size)} µs of workerd CPU (CPU per message / connections; the Worker's request and the call to the object included)`);
  for (const row of rows.filter((r) => r.config.shards > 0 && r.size === Math.max(...rows.map((x) => x.size)))) {
    lines.push(`- per delivery on a shard, ${row.config.shards} shards at ${row.size.toLocaleString("en")}: ${f2((median(row.cpu) * 1000) / row.size)} µs per message per connection; ${f2(median(row.cpu) / row.config.shards)} ms per message per shard (the sequencer's and the Worker's share included)`);
  }
  return lines.join("\n");
}

/** @returns an SVG line chart: last-client latency p50 (solid) and p99 (dashed) against connections, one colour per room */
function chart(rows: Row[], settings: ScaleSettings): string {
  const W = 760, H = 420, left = 64, right = 210, top = 40, bottom = 56;
  const xs = [...new Set(rows.map((r) => r.size))].sort((a, b) => a - b);
  const xMax = Math.max(...xs, 1);
  const yMax = niceCeil(Math.max(...rows.map((r) => quantile(r.last, 0.99)), 1));
  // Connections on a log scale: the sizes run from 1,000 to 40,000, and a linear axis crowds the small ones.
  const xMin = Math.min(...xs, xMax);
  const x = (v: number) => (left + (xMax > xMin ? Math.log(v / xMin) / Math.log(xMax / xMin) : 0.5) * (W - left - right)).toFixed(1);
  const y = (v: number) => (H - bottom - (v / yMax) * (H - top - bottom)).toFixed(1);
  const colours: Record<string, string> = { one: "#555555", loop: "#9467bd", stored: "#8c564b", r8: "#1f77b4", r16: "#d62728", h8: "#17becf", h16: "#ff7f0e" };
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${left}" y="22" font-size="14">Fan-out of ${settings.bytes} B to every client, until the last has it (ms)</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const v = (yMax / 5) * i;
    out.push(`<line x1="${left}" y1="${y(v)}" x2="${W - right}" y2="${y(v)}" stroke="#e5e5e5"/>`, `<text x="${left - 8}" y="${Number(y(v)) + 4}" text-anchor="end">${yMax >= 10 ? Math.round(v) : v.toFixed(2)}</text>`);
  }
  for (const v of xs) out.push(`<line x1="${x(v)}" y1="${H - bottom}" x2="${x(v)}" y2="${H - bottom + 5}" stroke="#333"/>`, `<text x="${x(v)}" y="${H - bottom + 18}" text-anchor="middle">${v >= 1000 ? `${v / 1000}k` : v}</text>`);
  out.push(
    `<line x1="${left}" y1="${H - bottom}" x2="${W - right}" y2="${H - bottom}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${H - bottom}" stroke="#333"/>`,
    `<text x="${(left + W - right) / 2}" y="${H - 16}" text-anchor="middle">connections (log scale)</text>`,
  );
  let legend = top + 10;
  for (const key of [...new Set(rows.map((r) => r.config.key))]) {
    const series = rows.filter((r) => r.config.key === key).sort((a, b) => a.size - b.size);
    const colour = colours[key] ?? "#2ca02c";
    for (const [q, dash] of [[0.5, ""], [0.99, ' stroke-dasharray="6 4"']] as const) {
      const points = series.map((r) => `${x(r.size)},${y(quantile(r.last, q))}`).join(" ");
      out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2"${dash} points="${points}"/>`);
      for (const r of series) out.push(`<circle cx="${x(r.size)}" cy="${y(quantile(r.last, q))}" r="3" fill="${colour}"/>`);
      out.push(`<line x1="${W - right + 14}" y1="${legend}" x2="${W - right + 40}" y2="${legend}" stroke="${colour}" stroke-width="2"${dash}/>`, `<text x="${W - right + 46}" y="${legend + 4}">${legendOf(series[0]!.config)} p${q * 100}</text>`);
      legend += 18;
    }
  }
  const many = rows.some((r) => r.config.hosts);
  out.push(`<text x="${W - right + 14}" y="${legend + 14}" font-size="10" fill="#666">${os.cpus().length} cores, one workerd${many ? " (or as labelled)" : ""};</text>`);
  out.push(`<text x="${W - right + 14}" y="${legend + 28}" font-size="10" fill="#666">clients on the same machine</text>`);
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** @returns a room's name in the chart's legend (short: the legend is 210 px wide) */
function legendOf(config: Config): string {
  return config.hosts ? `${config.shards} sh. in ${config.hosts} workerd` : config.label;
}

/** @returns the smallest of 1, 2, 2.5, 5 × 10^k at or above `v` */
function niceCeil(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((n) => n >= v) as number;
}

/** @returns the scale settings from the command line */
export function scaleSettings(quick: boolean): ScaleSettings {
  return {
    sizes: argList("scale-sizes", quick ? "1000,5000" : "1000,5000,10000,20000,30000,40000"),
    shards: argList("scale-shards", "8,16"),
    oneMax: Number(arg("scale-one-max", "32768")),
    publishes: Number(arg("scale-publishes", quick ? "4" : "10")),
    bytes: Number(arg("scale-bytes", "1024")),
    procs: Number(arg("scale-procs", "2")),
    parallel: Number(arg("scale-parallel", "64")),
    calls: Number(arg("scale-calls", "2000")),
    svg: arg("scale-svg", new URL("./rooms-scale.svg", import.meta.url).pathname),
    loop: process.argv.includes("--scale-loop"),
    hosts: Number(arg("scale-hosts", "0")),
    hostsSizes: argList("scale-hosts-sizes", "40000"),
    perf: arg("scale-perf", ""),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.env.X_LOCAL_OBSERVABILITY ??= "false";
  process.env.WRANGLER_LOG ??= "none";
  process.env.WRANGLER_SEND_METRICS ??= "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const quick = process.argv.includes("--quick");
  const t0 = performance.now();
  const log = (message: string) => process.stderr.write(`[rooms-scale ${((performance.now() - t0) / 1000).toFixed(0)}s] ${message}\n`);
  const { text, figures } = await roomsScaleBench(scaleSettings(quick), log);
  console.log(`\nRooms at scale (bench/rooms-scale.ts; bench/README.md)\n\n${text}`);
  const hosts = scaleSettings(quick).hosts > 0;
  const [measure, title] = hosts ? ["rooms-scale-hosts", "Rooms at scale, shards in several workerd processes"] : ["rooms-scale", "Rooms at scale"];
  console.log(`result file: ${recordFigures(measure, title, "bench/rooms-scale.ts", figures).pathname}`);
}
