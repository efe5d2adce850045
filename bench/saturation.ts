// Saturation ablation: what each piece of dokit's message path costs in workerd CPU per message.
//   node bench/saturation.ts [echo|rpc] [--rounds=15] [--rooms=raw,dokit,async,context,snapshot,await,contextawait] [--windows=<file>]
// (more rooms: resource, bound, true, floor, lean; see bench/README.md)
// The rooms of bench/worker-wake (see bench/README.md): 100 clients each, closed loop, 1 s windows,
// interleaved rounds in balanced orders (lib/order.ts), workerd pinned to its own CPU as in `pnpm bench`.
// Prints each room's median CPU per message and its paired ratio to raw (median of the rounds).
import { writeFileSync } from "node:fs";
import { closeAll, COMPRESSION, connectMany, roomUrl, type Client } from "./lib/client.ts";
import { closedLoop, pinWorkerd, workerdPids } from "./lib/load.ts";
import { median, pairedRatio } from "./lib/stats.ts";
import { arg, quietWrangler } from "./lib/cli.ts";
import { roundOrder } from "./lib/order.ts";
import { startBenchWorker } from "./lib/worker.ts";

quietWrangler();

const KIND = process.argv[2] === "rpc" ? "rpc" : "echo";
const ROUNDS = Number(arg("rounds", "15"));
const ROOMS = arg("rooms", "raw,dokit,async,context,snapshot,await,contextawait").split(",");
/** The rooms' order in each round (lib/order.ts): every room in every position, and after every other room, equally often. */
const orderOf = roundOrder(ROOMS);
/** `--windows=<file>`: writes each timed window's [room, start, end, replies] (seconds of CLOCK_MONOTONIC), for bench/perf-windows.ts. */
const WINDOWS = arg("windows", "");
const frame = (n: number) => (KIND === "rpc" ? `{"type":"rpc","id":"${n}","method":"echo","args":[${n}]}` : `e:${n}`);

const worker = await startBenchWorker(new URL("./worker-wake/wrangler.jsonc", import.meta.url).pathname);
try {
  const run = Date.now().toString(36);
  const clients: Record<string, Client[]> = {};
  // (Rooms with State, raw's and their variants: two connect frames each, as connectMany waits for.)
  for (const room of ROOMS) clients[room] = await connectMany((i) => roomUrl(worker.direct, room, `sat-${run}`, `c${i}`), 100);
  const pids = workerdPids();
  const placement = pinWorkerd(pids);
  const cpu: Record<string, number[]> = Object.fromEntries(ROOMS.map((room) => [room, []]));
  const windows: [string, number, number, number][] = [];
  try {
    for (let round = -1; round < ROUNDS; round++) {
      for (const room of orderOf(round)) {
        const start = Number(process.hrtime.bigint()) / 1e9;
        const window = await closedLoop(clients[room] as Client[], frame, 1_000, pids);
        if (round < 0) continue;
        cpu[room]?.push(window.cpuPerMessageUs);
        windows.push([room, start, Number(process.hrtime.bigint()) / 1e9, window.replies]);
      }
    }
  } finally {
    placement.unpin();
  }
  if (WINDOWS) writeFileSync(WINDOWS, JSON.stringify(windows));
  console.log(`\nSaturation, ${KIND}: workerd CPU per message, median of ${ROUNDS} rounds; ${placement.pinned}; ${COMPRESSION}\n`);
  for (const room of ROOMS) {
    const paired = pairedRatio(cpu[room] ?? [], cpu.raw ?? []);
    console.log(`${room.padEnd(13)} ${median(cpu[room] ?? []).toFixed(1).padStart(6)} µs  ${paired === undefined ? "-" : `${paired.toFixed(3)}×`} (paired)`);
  }
  for (const room of ROOMS) await closeAll(clients[room] ?? []);
} finally {
  await worker.dispose();
}
