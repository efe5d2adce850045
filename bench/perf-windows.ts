// Attributes the CPU of timed wakes: `perf` samples of workerd's main thread that fall inside
// the send → reply windows `bench/wake.ts --windows=<file>` wrote, summed per room and split by
// what the thread was doing. See bench/DIAGNOSTICS.md.
//   node bench/perf-windows.ts <perf script output> <windows.json> [--hz=10000] [--top=15]
// Windows from `bench/saturation.ts --windows=<file>` carry each window's replies: the CPU is then
// given per reply instead of per round.
// The perf data must be recorded with `-k CLOCK_MONOTONIC` (the clock the windows use) and
// printed with `perf script -F comm,tid,time,ip,sym --comm workerd`.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { arg } from "./lib/cli.ts";
import { readWindows } from "./lib/windows.ts";

const [textPath, windowsPath] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (!textPath || !windowsPath) throw new Error("usage: node bench/perf-windows.ts <perf script output> <windows.json> [--hz=10000] [--top=15]");
const US_PER_SAMPLE = 1e6 / Number(arg("hz", "10000"));
const TOP = Number(arg("top", "15"));

/** What the main thread was doing, by a frame on the sample's stack (the first that matches wins). */
const PARTS: [string, RegExp][] = [
  ["constructor", /\bExecution::New\b/], // the object's JavaScript constructor
  ["message", /sendHibernatableWebSocketMessage/], // the webSocketMessage event
  ["actor start", /worker_new_actor|Worker::Actor::Actor\b/], // workerd opening the object (its SQLite database)
];

const { list: windows, at: windowAt } = readWindows(windowsPath);

type Tally = { samples: number; javascript: number; parts: Map<string, number>; frames: Map<string, Map<string, number>> };
/** Per thread, per room. The main thread is the one with the most samples in the windows. */
const tallies = new Map<string, Map<string, Tally>>();

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function record(tid: string, room: string, frames: string[]): void {
  let rooms = tallies.get(tid);
  if (!rooms) tallies.set(tid, (rooms = new Map()));
  let tally = rooms.get(room);
  if (!tally) rooms.set(room, (tally = { samples: 0, javascript: 0, parts: new Map(), frames: new Map() }));
  tally.samples++;
  if (frames.some((frame) => frame.startsWith("JS:"))) tally.javascript++;
  const [part, pattern] = PARTS.find(([, pattern]) => frames.some((frame) => pattern.test(frame))) ?? ["other"];
  bump(tally.parts, part);
  if (!pattern || part === "actor start") return;
  // The innermost JavaScript frame above the part's own frame: native frames below it (runtime calls, sends) count as its own.
  const anchor = frames.findIndex((frame) => pattern.test(frame));
  const js = frames.slice(0, anchor).find((frame) => frame.startsWith("JS:")) ?? "(native)";
  let byFrame = tally.frames.get(part);
  if (!byFrame) tally.frames.set(part, (byFrame = new Map()));
  bump(byFrame, js);
}

let tid = "";
let room: string | undefined;
let frames: string[] = [];
const header = /^\S+\s+(\d+)\s+([\d.]+):/;
const frame = /^\s+[0-9a-f]+\s+(.*?)(?:\s+\(.*\))?$/;
for await (const line of createInterface({ input: createReadStream(textPath), crlfDelay: Infinity })) {
  if (line === "") {
    if (room) record(tid, room, frames);
    room = undefined;
    frames = [];
    continue;
  }
  const head = header.exec(line);
  if (head) {
    tid = head[1] as string;
    room = windowAt(Number(head[2]))?.[0];
  } else if (room) {
    const match = frame.exec(line);
    if (match) frames.push(match[1] as string);
  }
}
if (room) record(tid, room, frames);

const total = (rooms: Map<string, Tally>) => [...rooms.values()].reduce((sum, tally) => sum + tally.samples, 0);
const main = [...tallies].sort((a, b) => total(b[1]) - total(a[1]))[0];
if (!main) throw new Error("no samples fell inside the windows: record with `perf record -k CLOCK_MONOTONIC`");
const rounds = new Map<string, number>();
const wall = new Map<string, number>();
const replies = new Map<string, number>();
for (const [name, start, end, answered] of windows) {
  bump(rounds, name);
  wall.set(name, (wall.get(name) ?? 0) + (end - start));
  if (answered !== undefined) replies.set(name, (replies.get(name) ?? 0) + answered);
}
/** Saturation windows carry their replies: CPU per reply; wake windows: CPU per round (one timed wake). */
const unit = replies.size > 0 ? "reply" : "round";
const per = (room: string, samples: number) => (samples * US_PER_SAMPLE) / ((unit === "reply" ? replies : rounds).get(room) ?? 1);
const digits = unit === "reply" ? 2 : 0;
const columns = ["all", "javascript", ...PARTS.map(([name]) => name), "other"];
console.log(
  `CPU of workerd's main thread (tid ${main[0]}) inside the timed windows, µs per ${unit} (perf inflates all rooms; ` +
    "javascript: samples with a JavaScript frame on the stack, in any part)\n",
);
console.log(["room".padEnd(12), "rounds".padStart(6), "window".padStart(9), ...columns.map((c) => c.padStart(12))].join(" "));
for (const [name, tally] of main[1]) {
  const count = (c: string) => (c === "all" ? tally.samples : c === "javascript" ? tally.javascript : (tally.parts.get(c) ?? 0));
  const cells = columns.map((c) => per(name, count(c)).toFixed(digits).padStart(12));
  const window = ((wall.get(name) ?? 0) / (rounds.get(name) ?? 1)) * 1e6;
  console.log([name.padEnd(12), String(rounds.get(name)).padStart(6), `${window.toFixed(0)}`.padStart(9), ...cells].join(" "));
}
for (const [name, tally] of main[1]) {
  for (const [part, byFrame] of tally.frames) {
    console.log(`\n${name}, ${part}: by innermost JavaScript frame (µs per ${unit})`);
    for (const [js, samples] of [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${per(name, samples).toFixed(digits + 1).padStart(8)}  ${js}`);
  }
}
