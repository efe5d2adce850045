// A wake's JavaScript alone: how long each room takes to build its object and handle one
// message, without the runtime's own work around a wake (opening the object, the socket event).
//   node bench/construct.ts [--count=20000] [--rounds=5] [--rooms=raw,floor,lean,min,dokit] [--interpreted] [--flush=<bytes>]
//                           [--messages=<text>]
// Each round asks the worker's ConstructProbe (worker-wake/worker.ts) to build each room's object
// `count` times in one call, and subtracts the same loop building nothing. Prints each room's median
// µs per object and its difference to raw. `--interpreted` starts workerd with V8's `--jitless`:
// every function runs in V8's interpreter, as code run once per wake does until V8 compiles it.
// `--flush=<bytes>` reads a buffer that large before each object, so the room's code and data meet
// caches other work has filled, as on a wake. `--messages=<text>` times messages instead: each
// room's object is built once and handed `count` messages of that text (rooms `context`, `snapshot`,
// `resource` and `bound` too), and the figure is µs per message.
// See bench/DIAGNOSTICS.md.
import { median } from "./lib/stats.ts";
import { arg, quietWrangler } from "./lib/cli.ts";
import { roundOrder } from "./lib/order.ts";
import { startBenchWorker } from "./lib/worker.ts";

quietWrangler();

const COUNT = Number(arg("count", "20000"));
const ROUNDS = Number(arg("rounds", "5"));
const ROOMS = arg("rooms", "raw,floor,lean,min,dokit").split(",");
/** The rooms' order in each round (lib/order.ts): every room in every position, and after every other room, equally often. */
const orderOf = roundOrder(ROOMS);
const INTERPRETED = process.argv.includes("--interpreted");
const FLUSH = Number(arg("flush", "0"));
/** `--messages=<text>`: build each room's object once and time `count` messages of this text instead (per message, not per object). */
const MESSAGES = arg("messages", "");
if (INTERPRETED) process.env.MINIFLARE_WORKERD_V8_FLAGS = `${process.env.MINIFLARE_WORKERD_V8_FLAGS ?? ""} --jitless`.trim();

const worker = await startBenchWorker(new URL("./worker-wake/wrangler.jsonc", import.meta.url).pathname);
try {
  /** @returns the call's wall-clock time in ms */
  const call = async (room: string, count: number, build: boolean): Promise<number> => {
    const began = performance.now();
    const query = MESSAGES ? `message=${encodeURIComponent(MESSAGES)}` : `flush=${FLUSH}`;
    const response = await fetch(new URL(`/construct/${room}/${count}?${query}&build=${build ? 1 : 0}`, worker.direct));
    const text = await response.text();
    if (!response.ok || Number(text) !== count) throw new Error(`construct ${room}: ${response.status} ${text.slice(0, 200)}`);
    return performance.now() - began;
  };
  const build = (room: string, count: number) => call(room, count, true);
  // Once untimed, so every room's code has run before the rounds.
  for (const room of ROOMS) await build(room, Math.min(COUNT, 1000));
  /** µs per object (per message with `--messages`), by room. */
  const perPass: Record<string, number[]> = Object.fromEntries(ROOMS.map((room) => [room, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const room of orderOf(round)) {
      const empty = await call(room, COUNT, false);
      const full = await build(room, COUNT);
      perPass[room]?.push(((full - empty) * 1000) / COUNT);
    }
  }
  const raw = median(perPass.raw ?? []);
  const what = MESSAGES ? `A message's JavaScript alone: ${JSON.stringify(MESSAGES)}, ${COUNT} to one object per call` : `A wake's JavaScript alone: build the room's object + one message, ${COUNT} per call`;
  console.log(`${what}, median of ${ROUNDS} rounds${INTERPRETED ? " (V8 --jitless: interpreted)" : ""}\n`);
  for (const room of ROOMS) {
    const value = median(perPass[room] ?? []);
    const cells = [room.padEnd(8), `${value.toFixed(2)} µs`.padStart(11)];
    if (perPass.raw && room !== "raw") cells.push(`${(value - raw >= 0 ? "+" : "") + (value - raw).toFixed(2)} µs over raw`.padStart(20));
    console.log(cells.join(" "));
  }
} finally {
  await worker.dispose();
}
