// Where a timed wake's wall-clock time goes while workerd's main thread is off its CPU: `perf`
// records of the scheduler's switches (sched:sched_switch) that fall inside the send → reply
// windows `bench/wake.ts --windows=<file>` wrote, per room. See bench/DIAGNOSTICS.md.
//   node bench/perf-offcpu.ts <perf script output> <windows.json>
// Record with `perf record -k CLOCK_MONOTONIC -e sched:sched_switch -a` (the clock the windows use)
// and print with `perf script -F comm,tid,time,event,trace`.
import { readFileSync } from "node:fs";
import { median } from "./lib/stats.ts";
import { readWindows } from "./lib/windows.ts";

const [textPath, windowsPath] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (!textPath || !windowsPath) throw new Error("usage: node bench/perf-offcpu.ts <perf script output> <windows.json>");

const { list: windows, at: windowAt } = readWindows(windowsPath);

/** One stretch off the CPU: from the switch away to the switch back, and why it left (R: preempted, S or D: waiting). */
type Off = { from: number; to: number; state: string; by: string };
const SWITCH = /\s([\d.]+): sched:sched_switch: prev_comm=(.+?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+)/;
const switches = readFileSync(textPath, "utf8")
  .split("\n")
  .map((line) => SWITCH.exec(line))
  .filter((match) => match !== null)
  .map((m) => ({ time: Number(m[1]), prevComm: m[2] as string, prev: m[3] as string, state: (m[4] as string)[0] as string, nextComm: m[5] as string, next: m[6] as string }));

// workerd's main thread: the workerd thread that switches most often inside the windows.
const counts = new Map<string, number>();
for (const s of switches) if (s.prevComm === "workerd" && windowAt(s.time)) counts.set(s.prev, (counts.get(s.prev) ?? 0) + 1);
const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
if (!main) throw new Error("no switch of a workerd thread fell inside the windows: record with `perf record -k CLOCK_MONOTONIC -e sched:sched_switch -a`");

const offs: Off[] = [];
let away: { time: number; state: string; by: string } | undefined;
for (const s of switches) {
  if (s.prev === main) away = { time: s.time, state: s.state, by: s.nextComm };
  else if (s.next === main && away) {
    offs.push({ from: away.time, to: s.time, state: away.state, by: away.by });
    away = undefined;
  }
}

/** Per room, per round, in µs: the window, and its time off the CPU (before the message reaches workerd, waiting inside, after the reply leaves, preempted). */
type Tally = { wall: number[]; before: number[]; inside: number[]; after: number[]; preempted: number[]; by: Map<string, number> };
const rooms = new Map<string, Tally>();
// The stretches and the windows are both in time order: each window starts its scan where the
// stretches that ended before it stop.
let first = 0;
for (const [room, start, end] of windows) {
  let tally = rooms.get(room);
  if (!tally) rooms.set(room, (tally = { wall: [], before: [], inside: [], after: [], preempted: [], by: new Map() }));
  const round = { before: 0, inside: 0, after: 0, preempted: 0 };
  while (first < offs.length && (offs[first] as Off).to <= start) first++;
  for (let i = first; i < offs.length && (offs[i] as Off).from < end; i++) {
    const off = offs[i] as Off;
    const from = Math.max(off.from, start);
    const to = Math.min(off.to, end);
    if (to <= from) continue;
    const length = (to - from) * 1e6;
    if (off.state === "R") {
      round.preempted += length;
      tally.by.set(off.by, (tally.by.get(off.by) ?? 0) + length);
    } else if (off.from <= start) round.before += length; // asleep when the client sent: the message in flight
    else if (off.to >= end) round.after += length; // asleep when the client received: the reply in flight
    else round.inside += length;
  }
  tally.wall.push((end - start) * 1e6);
  tally.before.push(round.before);
  tally.inside.push(round.inside);
  tally.after.push(round.after);
  tally.preempted.push(round.preempted);
}

const cell = (values: number[]) => `${median(values).toFixed(0).padStart(6)} /${(values.reduce((sum, v) => sum + v, 0) / values.length).toFixed(0).padStart(5)}`;
console.log(`workerd's main thread (tid ${main}) inside the timed windows, µs per round (median / mean)\n`);
console.log(["room".padEnd(10), "rounds", "        wall", "  on the CPU", "waiting: before", "      inside", "       after", "   preempted"].join(" "));
for (const [room, t] of rooms) {
  const on = t.wall.map((wall, i) => wall - (t.before[i] as number) - (t.inside[i] as number) - (t.after[i] as number) - (t.preempted[i] as number));
  console.log([room.padEnd(10), String(t.wall.length).padStart(6), cell(t.wall), cell(on), cell(t.before).padStart(15), cell(t.inside), cell(t.after), cell(t.preempted)].join(" "));
}
for (const [room, t] of rooms) {
  const by = [...t.by].sort((a, b) => b[1] - a[1]).slice(0, 4);
  if (by.length) console.log(`\n${room}, preempted by (µs per round): ${by.map(([comm, length]) => `${comm} ${(length / t.wall.length).toFixed(1)}`).join(", ")}`);
}
