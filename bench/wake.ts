// Wake ablation: what each piece of dokit's wake path costs, over real sockets.
//   node bench/wake.ts [--open=10] [--rounds=300] [--rooms=raw,dokit,min,lifecycle,constructed,attachment,context,snapshot]
//                      [--broadcast] [--settle=<ms>] [--warm=<n>] [--warm-wakes=<n>] [--windows=<file>]
// (the rooms: worker-wake/worker.ts; `floor` is the hand-written floor of a wake, `lean` the dokit room's
// code on a hand-written lean composition, `rawtwin` raw's code as a class of its own; see the README)
// Each room has `open` connections; every round asks the probe connection for the instance id,
// evicts the object (as hibernation does), then times send → echo of the first message after
// the wake. Rooms are interleaved, in balanced orders (lib/order.ts). Prints each room's
// median, its difference to raw, and the median of its per-round differences to raw, for the
// wall-clock time and for workerd's CPU time over the same interval.
// See bench/DIAGNOSTICS.md.
import { writeFileSync } from "node:fs";
import { closeAll, COMPRESSION, connect, evictRoom, fanOut, roomUrl, roundTrip, type Client } from "./lib/client.ts";
import { cpuMs, workerdPids } from "./lib/load.ts";
import { median } from "./lib/stats.ts";
import { arg, quietWrangler } from "./lib/cli.ts";
import { roundOrder } from "./lib/order.ts";
import { startBenchWorker } from "./lib/worker.ts";

quietWrangler();

const OPEN = Number(arg("open", "10"));
const ROUNDS = Number(arg("rounds", "300"));
const ROOMS = arg("rooms", "raw,dokit,min,lifecycle,constructed,attachment,context,snapshot").split(",");
/** The rooms' order in each round (lib/order.ts): every room in every position, and after every other room, equally often. */
const orderOf = roundOrder(ROOMS);
/** `--broadcast`: before each echo wake, a wake that broadcasts to every open connection (as `pnpm bench`'s open measures do). */
const BROADCAST = process.argv.includes("--broadcast");
/** `--settle=<ms>`: wait this long between the eviction and the timed message (a wake after idle, as after hibernation). */
const SETTLE = Number(arg("settle", "0"));
/** `--warm=<n>`: before the rounds, n echoes on each room's probe, so its message path is compiled (as after `pnpm bench`'s saturation). */
const WARM = Number(arg("warm", "0"));
/** `--warm-wakes=<n>`: before the rounds, n wakes of another object of each room (one connection), so the code a wake runs is compiled (see the README). */
const WARM_WAKES = Number(arg("warm-wakes", "0"));
/** `--windows=<file>`: writes each timed echo's [room, start, end] in seconds of CLOCK_MONOTONIC, for bench/perf-windows.ts and bench/perf-offcpu.ts. */
const WINDOWS = arg("windows", "");
/** Rooms without State send identity only on connect. */
const FRAMES: Record<string, number> = { min: 1 };

const worker = await startBenchWorker(new URL("./worker-wake/wrangler.jsonc", import.meta.url).pathname);
try {
  const base = worker.direct;
  const run = Date.now().toString(36);
  const clients: Record<string, Client[]> = {};
  for (const room of ROOMS) {
    clients[room] = [];
    for (let i = 0; i < OPEN; i += 50) {
      const batch = Array.from({ length: Math.min(50, OPEN - i) }, (_, j) => connect(roomUrl(base, room, `wake-${run}`, `c${i + j}`), FRAMES[room] ?? 2));
      clients[room].push(...(await Promise.all(batch)));
    }
  }
  // An object idle for 10 s (a long --warm) hibernated by itself: there is nothing to evict, and its next message wakes it all the same.
  const evict = (room: string, name = `wake-${run}`) =>
    evictRoom(base, room, name).catch((error: Error) => {
      if (!error.message.includes("not currently running")) throw error;
    });
  for (const room of ROOMS) {
    const probe = clients[room]?.[0] as Client;
    for (let i = 0; i < WARM; i++) await roundTrip(probe, `e:warm${i}`, (d) => d === `e:warm${i}`);
  }
  // JavaScript run once per wake is compiled as V8 sees fit; this lets each class's wake code settle first.
  if (WARM_WAKES > 0) {
    for (const room of ROOMS) {
      const warm = await connect(roomUrl(base, room, `warmup-${run}`, "w0"), FRAMES[room] ?? 2);
      for (let i = 0; i < WARM_WAKES; i++) {
        await evict(room, `warmup-${run}`);
        await roundTrip(warm, `e:w${i}`, (d) => d === `e:w${i}`);
      }
      await closeAll([warm]);
    }
  }
  const samples: Record<string, number[]> = Object.fromEntries(ROOMS.map((room) => [room, []]));
  // workerd's CPU time over each timed wake (every thread's schedstat: bench/lib/load.ts).
  const pids = workerdPids();
  const cpu: Record<string, number[]> = Object.fromEntries(ROOMS.map((room) => [room, []]));
  const windows: [string, number, number][] = [];
  let stale = 0;
  for (let round = -5; round < ROUNDS; round++) {
    for (const room of orderOf(round)) {
      const probe = clients[room]?.[0] as Client;
      if (BROADCAST) {
        await evict(room);
        await fanOut(clients[room] ?? [], () => probe.ws.send(`b:${round}`), (d) => d === `b:${round}`);
      }
      let before = "";
      await roundTrip(probe, "i:", (d) => d.startsWith("i:") && Boolean((before = d)));
      await evict(room);
      if (SETTLE > 0) await new Promise((resolve) => setTimeout(resolve, SETTLE));
      const cpuBefore = cpuMs(pids);
      const start = process.hrtime.bigint();
      const ms = await roundTrip(probe, `e:${round}`, (d) => d === `e:${round}`);
      const end = process.hrtime.bigint();
      if (round >= 0) {
        cpu[room]?.push(cpuMs(pids) - cpuBefore);
        windows.push([room, Number(start) / 1e9, Number(end) / 1e9]);
      }
      let after = "";
      await roundTrip(probe, "i:", (d) => d.startsWith("i:") && Boolean((after = d)));
      if (after === before) stale++;
      if (round >= 0) samples[room]?.push(ms);
    }
  }
  if (stale > 0) throw new Error(`${stale} evictions did not produce a fresh instance`);
  if (WINDOWS) writeFileSync(WINDOWS, JSON.stringify(windows));
  const settled = SETTLE > 0 ? `, ${SETTLE} ms after the eviction` : "";
  console.log(`\nWake → echo, ${OPEN} open${settled}, median of ${ROUNDS} rounds (difference to raw; median of the per-round differences); ${COMPRESSION}`);
  report("send → echo (wall clock)", samples);
  if (pids.length > 0) report("workerd CPU over the same interval (all its threads)", cpu);
  for (const room of ROOMS) await closeAll(clients[room] ?? []);
} finally {
  await worker.dispose();
}

/** Prints each room's median (ms), its difference to raw's, and the median of its per-round differences to raw. */
function report(title: string, byRoom: Record<string, number[]>): void {
  console.log(`\n${title}\n`);
  const raw = median(byRoom.raw ?? []);
  for (const room of ROOMS) {
    const value = median(byRoom[room] ?? []);
    // The rooms of one round ran back to back, so a round's difference cancels drift between rounds.
    const paired = median((byRoom[room] ?? []).map((ms, i) => ms - (byRoom.raw?.[i] ?? Number.NaN)));
    console.log(
      `${room.padEnd(12)} ${value.toFixed(3)} ms  ${((value - raw) * 1000).toFixed(0).padStart(5)} µs  ${(value / raw).toFixed(3)}×  paired ${(paired * 1000).toFixed(0).padStart(5)} µs`,
    );
  }
}
