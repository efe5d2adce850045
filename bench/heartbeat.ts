// The heartbeat measures of `pnpm bench` (bench/README.md), on the rooms of worker/heartbeat.ts:
//   [heartbeat]  thousands of idle connections to one object, each pinging "dokit:ping" on an
//                interval, while the object hibernates: how many times the pings constructed the
//                object (the runtime answers them, so none), and the pong round trip meanwhile.
//                The raw room sets the runtime's answer by hand; the dokit room has
//                `WebSockets({ heartbeat: true })`. Both rooms run at once, their pings interleaved.
//   [deadlink]   how long a dead link (a proxy that stops forwarding, lib/proxy.ts) goes unnoticed:
//                by dokit's AgentClient with `heartbeat: { intervalMs, timeoutMs }` (until its
//                close event, and until it is open again through a fresh path), and by the
//                server's `HeartbeatSweep` (from the last ping the server got until its close frame).
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Client, closeAll, connect, connectMany, roomUrl, roundTrip } from "./lib/client.ts";
import { workerdPids } from "./lib/load.ts";
import { freezableProxy } from "./lib/proxy.ts";
import { type Figure, median, quantile } from "./lib/stats.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Settings of the idle-heartbeat measure; `pnpm bench` flags in brackets. */
export interface HeartbeatIdleSettings {
  /** Connections per room [`--heartbeat-connections=`, 4,000; 1,000 with --quick]. */
  connections: number;
  /** Seconds of the idle window [`--heartbeat-window=`, 70; 25 with --quick]. */
  windowS: number;
  /** Seconds between one connection's pings [`--heartbeat-interval=`, 30; 10 with --quick]. */
  intervalS: number;
}

/**
 * Seconds after the last connection opened from which a pong counts as answered while the object
 * is evicted: workerd evicts an idle hibernatable object after about 10 s, so 20 s leaves margin.
 */
const EVICTED_AFTER_S = 20;

/** The heartbeat rooms' constructions so far, read in the Worker without reaching any object. */
async function constructions(base: URL): Promise<{ raw: number; dokit: number; swept: number }> {
  const response = await fetch(new URL("/heartbeat-stats", base));
  if (!response.ok) throw new Error(`/heartbeat-stats: ${response.status}`);
  return (await response.json()) as { raw: number; dokit: number; swept: number };
}

/**
 * Makes sure this process and workerd may hold `files` descriptors each: raises the soft and hard
 * limits with `prlimit` (root) when they are lower, or fails saying what to run.
 */
function ensureFiles(files: number): void {
  for (const pid of [process.pid, ...workerdPids()]) {
    const soft = Number(execFileSync("prlimit", ["--pid", String(pid), "--nofile", "--output=SOFT", "--noheadings"], { encoding: "utf8" }).trim());
    if (soft >= files) continue;
    try {
      execFileSync("prlimit", ["--pid", String(pid), `--nofile=${files}:${files}`], { stdio: "ignore" });
    } catch {
      throw new Error(`heartbeat: process ${pid} may open ${soft} files, the measure needs ${files}: run as root, or raise \`ulimit -n\` first`);
    }
  }
}

/** @returns the id of the instance answering `client` (`i:`; a fresh one after each eviction) */
async function instanceOf(client: Client): Promise<string> {
  let id = "";
  await roundTrip(client, "i:", (d) => d.startsWith("i:") && Boolean((id = d)), 30_000);
  return id;
}

/**
 * [heartbeat] `connections` sockets to a fresh raw room and as many to a fresh dokit room (one
 * identity frame each on connect), then an idle window of `windowS`: every socket pings every
 * `intervalS`, the 2 × `connections` pings of an interval spread evenly over it (raw and dokit
 * alternating). Counts the constructions of each room during the window (through the Worker, so
 * counting wakes nothing), then sends `i:` to see a fresh instance answer: the object was
 * evicted during the window. Pong round trips are those of pings sent from EVICTED_AFTER_S
 * after the last connection opened.
 */
export async function heartbeatIdle(base: URL, run: string, settings: HeartbeatIdleSettings, log: (message: string) => void): Promise<Figure[]> {
  const { connections: n, windowS, intervalS } = settings;
  ensureFiles(2 * n + 2_000);
  const rooms = ["raw", "dokit"] as const;
  const room = `heartbeat-${run}`;
  const before = await constructions(base);
  const clients = {} as Record<(typeof rooms)[number], Client[]>;
  for (const impl of rooms) clients[impl] = await connectMany((i) => roomUrl(base, `hb-${impl}`, room, `c${i}`), n, 50, 1);
  const instances = { raw: await instanceOf(clients.raw[0] as Client), dokit: await instanceOf(clients.dokit[0] as Client) };
  /** The objects' last event: from here they are idle but for the pings. */
  const idleFrom = performance.now();
  const atStart = await constructions(base);
  for (const impl of rooms) {
    // One construction each, seen by the Worker: the objects and the Worker share the isolate.
    if (atStart[impl] - before[impl] !== 1) throw new Error(`heartbeat: the Worker saw ${atStart[impl] - before[impl]} constructions of the ${impl} room after the connects, not 1 (not one isolate?)`);
  }
  log(`heartbeat: ${2 * n} sockets open, one ${windowS} s window, a ping every ${intervalS} s per socket`);

  const rtt = { raw: [] as number[], dokit: [] as number[] };
  const unanswered = { raw: 0, dokit: 0 };
  /** Per socket: when its unanswered ping went out (NaN when none is). */
  const sockets = rooms.flatMap((impl) => clients[impl].map((client) => ({ impl, client, sentAt: Number.NaN })));
  const timers: ReturnType<typeof setTimeout>[] = [];
  const windowStart = performance.now();
  const windowEnd = windowStart + windowS * 1000;
  const step = (intervalS * 1000) / (2 * n);
  for (const socket of sockets) {
    const { impl, client } = socket;
    client.onMessage = (data) => {
      if (data !== "dokit:pong" || Number.isNaN(socket.sentAt)) return;
      if (socket.sentAt - idleFrom >= EVICTED_AFTER_S * 1000) rtt[impl].push(performance.now() - socket.sentAt);
      socket.sentAt = Number.NaN;
    };
  }
  const ping = (socket: (typeof sockets)[number]) => {
    if (performance.now() >= windowEnd) return;
    if (!Number.isNaN(socket.sentAt)) unanswered[socket.impl]++;
    socket.sentAt = performance.now();
    socket.client.ws.send("dokit:ping");
  };
  // Raw and dokit alternate: the i-th socket of each room pings at (2i) and (2i + 1) steps.
  for (let i = 0; i < n; i++) {
    for (const [k, impl] of rooms.entries()) {
      const socket = sockets[(impl === "raw" ? 0 : n) + i] as (typeof sockets)[number];
      const first = () => {
        ping(socket);
        timers.push(setInterval(() => ping(socket), intervalS * 1000));
      };
      timers.push(setTimeout(first, (2 * i + k) * step));
    }
  }
  for (let at = 10; at < windowS; at += 10) {
    await sleep(windowStart + at * 1000 - performance.now());
    const now = await constructions(base);
    log(`heartbeat: ${at} s, constructions raw +${now.raw - atStart.raw}, dokit +${now.dokit - atStart.dokit}; pongs ${rtt.raw.length} / ${rtt.dokit.length}`);
  }
  await sleep(windowEnd - performance.now() + 1_000); // the last pongs
  for (const timer of timers) clearTimeout(timer);
  const atEnd = await constructions(base);
  const evicted = { raw: (await instanceOf(clients.raw[0] as Client)) !== instances.raw, dokit: (await instanceOf(clients.dokit[0] as Client)) !== instances.dokit };
  for (const socket of sockets) if (!Number.isNaN(socket.sentAt) || socket.client.ws.readyState !== WebSocket.OPEN) unanswered[socket.impl]++;
  for (const impl of rooms) await closeAll(clients[impl]);

  const measure = `heartbeat: ${n} idle connections, a ping each every ${intervalS} s, ${windowS} s`;
  const notEvicted = rooms.filter((impl) => !evicted[impl]);
  const note = notEvicted.length ? `NOT EVICTED in the window: ${notEvicted.join(", ")}` : "both evicted during the window";
  const both = (f: (impl: "raw" | "dokit") => number) => ({ raw: f("raw"), dokit: f("dokit") });
  const counts = both((impl) => rtt[impl].length);
  return [
    { measure, stat: "constructions in the window", unit: "count", values: both((impl) => atEnd[impl] - atStart[impl]), note },
    { measure, stat: `pong p50, from ${EVICTED_AFTER_S} s`, unit: "ms", values: both((impl) => quantile(rtt[impl], 0.5)), samples: counts },
    { measure, stat: `pong p99, from ${EVICTED_AFTER_S} s`, unit: "ms", values: both((impl) => quantile(rtt[impl], 0.99)), samples: counts },
    { measure, stat: "pings unanswered", unit: "count", values: both((impl) => unanswered[impl]) },
  ];
}

/** Settings of the dead-link measure; `pnpm bench` flags in brackets. */
export interface DeadLinkSettings {
  /** Freezes per side [`--deadlink-runs=`, 12; 3 with --quick]. */
  runs: number;
  /** The client's `heartbeat.intervalMs` [2 000]. */
  intervalMs: number;
  /** The client's `heartbeat.timeoutMs` [1 000]. */
  timeoutMs: number;
  /** How often the sweep measure's client pings, in ms [1 000]. */
  sweepPingMs: number;
  /** DokitSweptRoom's `HeartbeatSweep({ timeoutMs })` (worker/heartbeat.ts, SWEEP_TIMEOUT_MS). */
  sweepTimeoutMs: number;
}

type AgentClientClass = typeof import("dokit/client").AgentClient;

/**
 * dokit's client from `dokit/client` as the working tree has it (the package's `@dokit/source`
 * condition, as the bench workers resolve it), bundled by esbuild into a temporary module: the
 * source's extensionless imports do not load in Node as they are.
 */
async function loadAgentClient(): Promise<AgentClientClass> {
  const { build } = await import("esbuild");
  const out = await build({
    stdin: { contents: `export { AgentClient } from "dokit/client";`, resolveDir: fileURLToPath(new URL(".", import.meta.url)) },
    conditions: ["@dokit/source"],
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "silent",
  });
  const file = join(mkdtempSync(join(os.tmpdir(), "dokit-bench-client-")), "client.mjs");
  writeFileSync(file, out.outputFiles[0]?.text ?? "");
  return ((await import(pathToFileURL(file).href)) as { AgentClient: AgentClientClass }).AgentClient;
}

/** A random delay in [0, ms): freezes land at every phase of the ping interval and the sweep's grid. */
const anyPhase = (ms: number) => sleep(Math.random() * ms);

/**
 * [deadlink] (a) dokit's AgentClient with `heartbeat: { intervalMs, timeoutMs }` on a dokit
 * heartbeat room through the proxy, which freezes the client's connection at a random moment:
 * freeze → the client's close event (1006 "Heartbeat timed out"), freeze → its next open (through
 * a fresh connection, which the proxy forwards; the client's own reconnect delay, default 0.5-1 s,
 * included). (b) A `ws` client pinging the sweep room every `sweepPingMs` through the proxy,
 * frozen at a random moment: the server's last ping (the last bytes the proxy forwarded) → the
 * server's close frame (3008), which the proxy reads on the frozen connection. Both sides run at
 * once, one freeze after another on each.
 */
export async function deadLink(base: URL, run: string, settings: DeadLinkSettings, log: (message: string) => void): Promise<Figure[]> {
  const { runs, intervalMs, timeoutMs, sweepPingMs, sweepTimeoutMs } = settings;
  const AgentClient = await loadAgentClient();
  // One proxy per side: a proxy hands its connections to the side that waits for the next one.
  const proxy = await freezableProxy(base);
  const sweepProxy = await freezableProxy(base);
  const detect: number[] = [];
  const reopen: number[] = [];
  const swept: number[] = [];
  const via = new URL(`http://${sweepProxy.host}/`);

  const clientSide = async () => {
    for (let r = 0; r < runs; r++) {
      const link = proxy.nextLink();
      const agent = new AgentClient({ agent: "DokitHeartbeatRoom", basePath: `room/hb-dokit/deadlink-${run}-${r}`, host: proxy.host, heartbeat: { intervalMs, timeoutMs } });
      const closed = new Promise<{ at: number; code: number; reason: string }>((resolve) =>
        agent.addEventListener("close", (event: Event) => resolve({ at: performance.now(), code: (event as CloseEvent).code, reason: (event as CloseEvent).reason }), { once: true }),
      );
      try {
        await agent.ready;
        const frozen = await link;
        await sleep(intervalMs); // a ping answered first
        await anyPhase(intervalMs);
        const reopened = closed.then(() => new Promise<number>((resolve) => agent.addEventListener("open", () => resolve(performance.now()), { once: true })));
        const freezeAt = performance.now();
        frozen.freeze();
        const close = await closed;
        if (close.code !== 1006 || close.reason !== "Heartbeat timed out") throw new Error(`deadlink: the client closed with ${close.code} ${close.reason}`);
        detect.push(close.at - freezeAt);
        reopen.push((await reopened) - freezeAt);
      } finally {
        agent.close();
      }
    }
  };

  const serverSide = async () => {
    for (let r = 0; r < runs; r++) {
      // The sweep runs on a grid of its timeout and each run starts right after the last close,
      // at a grid time: a random wait puts this run's pings at any phase of the grid.
      await anyPhase(sweepTimeoutMs);
      const link = sweepProxy.nextLink();
      const client = await connect(roomUrl(via, "hb-swept", `deadlink-swept-${run}-${r}`), 1);
      const pinger = setInterval(() => client.ws.send("dokit:ping"), sweepPingMs);
      try {
        const frozen = await link;
        await sleep(sweepPingMs + 100);
        await anyPhase(sweepTimeoutMs);
        frozen.freeze();
        clearInterval(pinger);
        const frozenAt = performance.now();
        const close = await Promise.race([frozen.serverClosed, sleep(4 * sweepTimeoutMs).then(() => undefined)]);
        if (close && close.at < frozenAt) throw new Error(`deadlink: the server closed the socket (${close.code}) before the freeze`);
        if (!close) throw new Error(`deadlink: the sweep closed no socket within ${4 * sweepTimeoutMs} ms of the freeze`);
        if (close.code !== 3008) throw new Error(`deadlink: the server closed with ${close.code}, not 3008`);
        swept.push(close.at - frozen.lastForwardedAt);
      } finally {
        clearInterval(pinger);
        client.ws.close();
      }
    }
  };

  try {
    await Promise.all([clientSide(), serverSide()]);
  } finally {
    await proxy.close();
    await sweepProxy.close();
  }
  log(`deadlink: client ${detect.map((ms) => ms.toFixed(0)).join(" ")} ms; sweep ${swept.map((ms) => ms.toFixed(0)).join(" ")} ms`);

  const clientMeasure = `dead link, client (heartbeat ${intervalMs} / ${timeoutMs} ms): freeze →`;
  const serverMeasure = `dead link, server (HeartbeatSweep ${sweepTimeoutMs} ms, ping every ${sweepPingMs} ms): last ping → close`;
  /** The samples' range, and how many are within `bound` when one is set. */
  const spread = (samples: number[], bound?: number) =>
    `range ${Math.min(...samples).toFixed(0)}-${Math.max(...samples).toFixed(0)} ms` +
    (bound === undefined ? "" : `; ${samples.filter((ms) => ms <= bound).length} of ${samples.length} within ${bound} ms`);
  const figure = (measure: string, samples: number[], note: string): Figure => ({
    measure,
    stat: "median",
    unit: "ms",
    values: { dokit: median(samples) },
    samples: { dokit: samples.length },
    note,
  });
  return [
    figure(`${clientMeasure} close`, detect, `${spread(detect, 2 * intervalMs)} (2 intervals)`),
    figure(`${clientMeasure} open again`, reopen, spread(reopen)),
    figure(serverMeasure, swept, `${spread(swept, 2 * sweepTimeoutMs)} (2 × timeoutMs)`),
  ];
}
