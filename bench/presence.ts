// The presence measure [presence] of `pnpm bench`: dokit's Presence (worker/presence.ts,
// DokitPresenceRoom) against the same presence written by hand on the hibernation API
// (RawPresenceRoom): same wire frames, same 50 ms tick, latest value per connection held in
// memory and written to the socket's attachment, one frame per tick to the watchers. The
// reference (agents@0.32.0) has no presence: no ref column.
//
// - Join → seen: `watchers` connections watch (`{"type":"dokit_presence","watch":true}`, then
//   their snapshot); a new connection publishes a value; from its send until each watcher
//   received the `set` frame with it. p50 and p99 over the watchers, median over the rounds. The
//   tick is inside it (the change is held for it): a row gives the p50 less the tick.
// - Cursor load: `connections` connections, all watching, each publishing a cursor `rate` times
//   a second for `seconds` (default 200 × 60 Hz for 10 s: 1,000 is far more than this 2-core
//   machine sustains, bench/README.md), in paired rounds (raw then dokit, or dokit then raw), workerd pinned
//   as in the saturation measure. Per window: updates sent and absorbed per second (sent, over the
//   time until one watcher saw every connection's last value), workerd's CPU per update (its
//   threads' schedstat over that time), and the presence frames each connection received per tick.
import { arg } from "./lib/cli.ts";
import { WebSocket } from "ws";
import { cpuMs, pinWorkerd, sleep, workerdPids } from "./lib/load.ts";
import { roundOrder } from "./lib/order.ts";
import { type Figure, median, pairedRatio, quantile } from "./lib/stats.ts";

const IMPLS = ["raw", "dokit"] as const;
type Impl = (typeof IMPLS)[number];
/** The bench worker's room path of each implementation (worker/presence.ts). */
const ROOM: Record<Impl, string> = { raw: "presence-raw", dokit: "presence-dokit" };
/** The tick both rooms hold changes for (worker/presence.ts's PRESENCE_TICK_MS, dokit's default). */
export const TICK_MS = 50;
/** Every presence frame starts so (both rooms write the type first). */
const PREFIX = '{"type":"dokit_presence"';

/** The measure's settings (`pnpm bench --presence-…` flags, bench/README.md). */
export interface PresenceSettings {
  /** Watching connections of the join measure. */
  watchers: number;
  /** Join rounds per room (after two warm-up rounds). */
  joinRounds: number;
  /** Publishing (and watching) connections of the cursor load. */
  connections: number;
  /** Updates a second per connection. */
  rate: number;
  /** Length of one load window, in seconds. */
  seconds: number;
  /** Load windows per room (after one warm-up window each). */
  loadRounds: number;
  /** Leave workerd unpinned (`--no-pin`). */
  noPin: boolean;
}

/** What the measure returns to bench/run.ts: its figures, and lines printed under the table. */
export interface PresenceReport {
  figures: Figure[];
  text: string;
}

/**
 * @returns the settings from the command line (`--presence-watchers`, `--presence-connections`,
 *   `--presence-rate`, `--presence-seconds`), at their defaults otherwise; `--quick` takes fewer rounds
 */
export function presenceSettings(quick: boolean, noPin: boolean): PresenceSettings {
  return {
    watchers: Number(arg("presence-watchers", quick ? "200" : "1000")),
    joinRounds: quick ? 4 : 12,
    connections: Number(arg("presence-connections", "200")),
    rate: Number(arg("presence-rate", "60")),
    seconds: Number(arg("presence-seconds", quick ? "3" : "10")),
    loadRounds: quick ? 2 : 6,
    noPin,
  };
}

const orderOf = roundOrder(IMPLS);
const url = (base: URL, impl: Impl, room: string, pk: string): string => {
  const href = new URL(`/room/${ROOM[impl]}/${room}`, base);
  href.protocol = "ws:";
  href.searchParams.set("_pk", pk);
  return href.href;
};
const presence = (frame: object): string => JSON.stringify({ type: "dokit_presence", ...frame });

/**
 * A watching connection as the measure reads it: a `ws` client that skips UTF-8 validation and
 * sees each frame as the bytes received, so a thousand watchers cost the client little more than
 * the socket reads (a client that decodes every frame falls behind the 1.6 MB a tick sends to 200
 * watchers, and then counts the frames late). No permessage-deflate, whatever `--deflate` says.
 */
interface Watcher {
  ws: WebSocket;
  /** Called with every frame; replace it per measure. */
  onFrame: (data: Buffer) => void;
}

const bytes = (text: string) => Buffer.from(text);
const PREFIX_BYTES = bytes(PREFIX);
const SET_BYTES = bytes(`${PREFIX},"set"`);
const SNAPSHOT_BYTES = bytes(`${PREFIX},"you"`);
const startsWith = (data: Buffer, head: Buffer) => data.length >= head.length && data.compare(head, 0, head.length, 0, head.length) === 0;

/** Opens a watcher and resolves once its first frame (the identity frame) arrived. */
function openWatcher(href: string, timeoutMs = 30_000): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(href, { perMessageDeflate: false, skipUTF8Validation: true });
    const watcher: Watcher = { ws, onFrame: () => {} };
    const timer = setTimeout(() => reject(new Error(`connect timed out: ${href}`)), timeoutMs);
    ws.once("message", () => {
      clearTimeout(timer);
      ws.on("message", (data: Buffer) => watcher.onFrame(data));
      resolve(watcher);
    });
    ws.once("open", () => {
      if (ws.extensions !== "") reject(new Error(`connect: extensions "${ws.extensions}" (expected none): ${href}`));
    });
    ws.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Closes watchers and waits (bounded) until they report closed. */
async function closeWatchers(watchers: readonly Watcher[]): Promise<void> {
  await Promise.all(
    watchers.map(
      ({ ws }) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(resolve, 2_000);
          ws.once("close", () => {
            clearTimeout(timer);
            resolve();
          });
          ws.close(1000, "bench done");
        }),
    ),
  );
}

/**
 * Opens `count` connections (ids `c0`…), 50 at a time; each sends `first` once its identity frame
 * arrived and is returned once its snapshot did.
 */
async function openPresent(href: (pk: string) => string, count: number, first: string): Promise<Watcher[]> {
  const watchers: Watcher[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const watcher = await openWatcher(href(`c${i}`));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no presence snapshot for c${i}`)), 30_000);
        watcher.onFrame = (data) => {
          if (!startsWith(data, SNAPSHOT_BYTES)) return;
          clearTimeout(timer);
          watcher.onFrame = () => {};
          resolve();
        };
        watcher.ws.send(first);
      });
      watchers[i] = watcher;
    }
  };
  await Promise.all(Array.from({ length: Math.min(50, count) }, lane));
  return watchers;
}

/** Resolves once every watcher received a frame `match` accepts, with each one's arrival time; rejects after `timeoutMs`. */
function arrivals(watchers: readonly Watcher[], match: (data: Buffer) => boolean, timeoutMs = 30_000): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const at: number[] = new Array(watchers.length);
    let pending = watchers.length;
    const timer = setTimeout(() => reject(new Error(`presence: ${pending} of ${watchers.length} watchers never received the frame`)), timeoutMs);
    for (const [i, watcher] of watchers.entries()) {
      watcher.onFrame = (data) => {
        if (!match(data)) return;
        at[i] = performance.now();
        watcher.onFrame = () => {};
        if (--pending === 0) {
          clearTimeout(timer);
          resolve(at);
        }
      };
    }
  });
}

// ------------------------------------------------------------------ join → seen

/** Join → seen: a new connection publishes; until each of `watchers` watching connections received it. */
async function joinToSeen(base: URL, run: string, settings: PresenceSettings, log: (message: string) => void): Promise<Figure[]> {
  const room = `presence-join-${run}`;
  const watchers = {} as Record<Impl, Watcher[]>;
  for (const impl of IMPLS) watchers[impl] = await openPresent((pk) => url(base, impl, room, pk), settings.watchers, presence({ watch: true }));
  log(`presence: ${settings.watchers} watchers per room open`);
  const p50 = { raw: [] as number[], dokit: [] as number[] };
  const p99 = { raw: [] as number[], dokit: [] as number[] };
  const beyond = { raw: [] as number[], dokit: [] as number[] };
  for (let round = -2; round < settings.joinRounds; round++) {
    for (const impl of orderOf(round)) {
      const id = `j${round + 2}`;
      const publisher = await openWatcher(url(base, impl, room, id));
      const entry = bytes(`["${id}",`);
      const seen = arrivals(watchers[impl], (d) => startsWith(d, SET_BYTES) && d.includes(entry));
      const start = performance.now();
      publisher.ws.send(presence({ value: { name: id, x: 1, y: 2 }, watch: false }));
      const latencies = (await seen).map((at) => at - start);
      // The publisher leaves; the next round starts once every watcher heard it (a quiet room).
      const left = arrivals(watchers[impl], (d) => d.includes('"left":[') && d.includes(`"${id}"`));
      await closeWatchers([publisher]);
      await left;
      if (round < 0) continue;
      p50[impl].push(quantile(latencies, 0.5));
      p99[impl].push(quantile(latencies, 0.99));
      beyond[impl].push(quantile(latencies, 0.5) - TICK_MS);
    }
  }
  for (const impl of IMPLS) await closeWatchers(watchers[impl]);
  const measure = `presence: join → seen by ${settings.watchers} watchers (${TICK_MS} ms tick included)`;
  const counts = { raw: settings.joinRounds, dokit: settings.joinRounds };
  const ms = (samples: Record<Impl, number[]>) => ({ raw: median(samples.raw), dokit: median(samples.dokit) });
  return [
    { measure, stat: "p50", unit: "ms", values: ms(p50), samples: counts, baselineNote: "no ref: agents has no presence" },
    { measure, stat: "p99", unit: "ms", values: ms(p99), samples: counts },
    { measure: `presence: join → seen by ${settings.watchers} watchers, beyond the tick`, stat: `p50 − ${TICK_MS} ms`, unit: "ms", values: ms(beyond), samples: counts },
  ];
}

// ------------------------------------------------------------------ cursor load

/** What one load window measured. */
interface LoadWindow {
  sentPerSecond: number;
  absorbedPerSecond: number;
  cpuPerUpdateUs: number;
  /** Presence frames per connection per tick: the most any connection received, and the mean. */
  framesPerTickMax: number;
  framesPerTickMean: number;
  /** Whether the watcher saw every connection's last value before the wait's bound. */
  drained: boolean;
}

/**
 * One window: every connection publishes `{x,y,n}` `rate` times a second for `seconds`, spread
 * evenly (round-robin, in steps of 5 ms); then until connection 0 (a watcher) received every
 * connection's last value. `seq` carries each connection's `n` across windows.
 */
async function loadWindow(clients: readonly Watcher[], seq: number[], settings: PresenceSettings, pids: readonly number[]): Promise<LoadWindow> {
  const count = clients.length;
  const frames = new Array<number>(count).fill(0);
  /** The latest `n` connection 0 saw for each connection. */
  const seen = new Array<number>(count).fill(-1);
  const last = new Array<number>(count).fill(Number.POSITIVE_INFINITY);
  let behind = count;
  let caughtUp: () => void = () => {};
  const done = new Promise<void>((resolve) => (caughtUp = resolve));
  for (const [i, client] of clients.entries()) {
    client.onFrame = (data) => {
      if (!startsWith(data, PREFIX_BYTES)) return;
      frames[i]!++;
      if (i !== 0 || !startsWith(data, SET_BYTES)) return;
      for (const [id, value] of (JSON.parse(data.toString()) as { set: [string, { n: number }][] }).set) {
        const from = Number(id.slice(1));
        const was = seen[from]!;
        seen[from] = value.n;
        if (was < last[from]! && value.n >= last[from]! && --behind === 0) caughtUp();
      }
    };
  }
  const total = Math.round(count * settings.rate * settings.seconds);
  const cpuBefore = cpuMs(pids);
  const start = performance.now();
  let sent = 0;
  let next = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * count * settings.rate));
    for (; sent < due; sent++, next = (next + 1) % count) {
      const n = ++seq[next]!;
      clients[next]!.ws.send(`{"type":"dokit_presence","value":{"x":${(n * 7) % 1920},"y":${(n * 13) % 1080},"n":${n}}}`);
    }
    await sleep(5);
  }
  const sentFor = performance.now() - start;
  for (let i = 0; i < count; i++) {
    last[i] = seq[i]!;
    if (seen[i]! >= last[i]!) behind--;
  }
  if (behind === 0) caughtUp();
  let bound: ReturnType<typeof setTimeout> | undefined;
  const drained = await Promise.race([done.then(() => true), new Promise<boolean>((resolve) => (bound = setTimeout(resolve, 60_000, false)))]);
  clearTimeout(bound);
  const elapsed = performance.now() - start;
  const cpu = cpuMs(pids) - cpuBefore;
  // Whatever the last tick still sends arrives before the next window.
  await sleep(3 * TICK_MS);
  for (const client of clients) client.onFrame = () => {};
  const ticks = elapsed / TICK_MS;
  return {
    sentPerSecond: (total / sentFor) * 1000,
    absorbedPerSecond: (total / elapsed) * 1000,
    cpuPerUpdateUs: (cpu * 1000) / total,
    framesPerTickMax: Math.max(...frames) / ticks,
    framesPerTickMean: frames.reduce((a, b) => a + b, 0) / count / ticks,
    drained,
  };
}

/** Cursor load: paired windows of raw and dokit, workerd pinned to its own CPU. */
async function cursorLoad(base: URL, run: string, settings: PresenceSettings, log: (message: string) => void): Promise<{ figures: Figure[]; pinned: string; undrained: number }> {
  const room = `presence-load-${run}`;
  const clients = {} as Record<Impl, Watcher[]>;
  const seq = { raw: new Array<number>(settings.connections).fill(0), dokit: new Array<number>(settings.connections).fill(0) };
  for (const impl of IMPLS) {
    clients[impl] = await openPresent((pk) => url(base, impl, room, pk), settings.connections, presence({ value: { x: 0, y: 0, n: 0 }, watch: true }));
  }
  log(`presence: ${settings.connections} publishing watchers per room open; ${settings.rate} Hz, ${settings.seconds} s windows`);
  const pids = workerdPids();
  const placement = settings.noPin ? { pinned: "not pinned (--no-pin)", unpin() {} } : pinWorkerd(pids);
  const windows = { raw: [] as LoadWindow[], dokit: [] as LoadWindow[] };
  let undrained = 0;
  try {
    for (let round = -1; round < settings.loadRounds; round++) {
      for (const impl of orderOf(round)) {
        const window = await loadWindow(clients[impl], seq[impl], round < 0 ? { ...settings, seconds: Math.min(settings.seconds, 3) } : settings, pids);
        if (!window.drained) undrained++;
        if (round >= 0) windows[impl].push(window);
        log(
          `presence: ${impl} round ${round}: sent ${window.sentPerSecond.toFixed(0)}/s, absorbed ${window.absorbedPerSecond.toFixed(0)}/s, ` +
            `${window.cpuPerUpdateUs.toFixed(1)} µs CPU/update, frames/tick max ${window.framesPerTickMax.toFixed(3)}${window.drained ? "" : " (NOT DRAINED in 60 s)"}`,
        );
      }
    }
  } finally {
    placement.unpin();
  }
  for (const impl of IMPLS) await closeWatchers(clients[impl]);
  const of = (key: keyof LoadWindow) => ({ raw: windows.raw.map((w) => Number(w[key])), dokit: windows.dokit.map((w) => Number(w[key])) });
  const med = (samples: Record<Impl, number[]>) => ({ raw: median(samples.raw), dokit: median(samples.dokit) });
  const counts = { raw: settings.loadRounds, dokit: settings.loadRounds };
  const measure = `presence: ${settings.connections} cursors × ${settings.rate} Hz, all watching (${settings.seconds} s windows)`;
  const absorbed = of("absorbedPerSecond");
  const cpu = of("cpuPerUpdateUs");
  const max = of("framesPerTickMax");
  return {
    pinned: placement.pinned,
    undrained,
    figures: [
      { measure, stat: "updates sent", unit: "msg/s", higherIsBetter: true, values: med(of("sentPerSecond")), samples: counts },
      { measure, stat: "updates absorbed", unit: "msg/s", higherIsBetter: true, values: med(absorbed), samples: counts, paired: { "dokit/raw": pairedRatio(absorbed.dokit, absorbed.raw) } },
      { measure, stat: "workerd CPU/update", unit: "µs", values: med(cpu), samples: counts, target: 1.1, paired: { "dokit/raw": pairedRatio(cpu.dokit, cpu.raw) } },
      // The most of any window: must not pass 1.
      { measure, stat: "frames/connection/tick, max", unit: "frames/tick", values: { raw: Math.max(...max.raw), dokit: Math.max(...max.dokit) }, samples: counts },
      { measure, stat: "frames/connection/tick, mean", unit: "frames/tick", values: med(of("framesPerTickMean")), samples: counts },
    ],
  };
}

/** The presence measure: join → seen, then the cursor load. */
export async function presenceBench(base: URL, run: string, settings: PresenceSettings, log: (message: string) => void): Promise<PresenceReport> {
  const figures = await joinToSeen(base, run, settings, log);
  const load = await cursorLoad(base, run, settings, log);
  figures.push(...load.figures);
  const text = [
    `presence: raw (worker/presence.ts, by hand on the hibernation API) and dokit (Presence) only; agents@0.32.0 has no presence.`,
    `The ${TICK_MS} ms tick is part of join → seen. Cursor load: ${load.pinned}; ${load.undrained === 0 ? "every window drained" : `${load.undrained} window(s) NOT drained within 60 s (the object did not keep up)`}.`,
  ].join("\n");
  return { figures, text };
}
