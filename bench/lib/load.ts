// Load helpers: closed-loop saturation over many clients, and the workerd
// processes' CPU time, read from /proc (Linux; elsewhere NaN).
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import os from "node:os";
import type { Client } from "./client.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Linux's USER_HZ: /proc reports CPU time in 1/100 s ticks on every mainstream kernel. */
const TICKS_PER_SECOND = 100;

/** @returns the ids of the workerd processes started below this Node process (wrangler's children) */
export function workerdPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const parent = new Map<number, number>();
  const workerd = new Set<number>();
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      parent.set(Number(name), ppid);
      if (comm === "workerd") workerd.add(Number(name));
    } catch {
      // the process exited meanwhile
    }
  }
  const below = (pid: number) => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...workerd].filter(below);
}

/**
 * @returns the id of the workerd process (of {@link workerdPids}) listening on TCP `port` on
 * loopback: the user worker's own process when given its direct address's port (lib/worker.ts),
 * not wrangler's proxy worker's; undefined without /proc or when none is found
 */
export function listenerPid(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    // sl local_address rem_address st … inode: a listening socket (st 0A) on the port
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1]?.split(":")[1];
      if (local !== undefined && Number.parseInt(local, 16) === port && fields[3] === "0A" && fields[9]) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const pid of workerdPids()) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (socket && inodes.has(socket[1] as string)) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/**
 * Pins the workerd processes (every thread) to the last CPU and this process (the clients,
 * and wrangler) to the others, with `taskset` (Linux, 2 or more CPUs), until `unpin()`. Under
 * saturation on 2 cores the clients otherwise run on workerd's core part of the time, and
 * workerd's CPU per message swings with how the scheduler happens to share it.
 * @returns what was done (for the report), and how to give every process every CPU again
 */
export function pinWorkerd(pids: readonly number[]): { pinned: string; unpin(): void } {
  const cpus = os.availableParallelism();
  const place = (pid: number, list: string) => execFileSync("taskset", ["-a", "-p", "-c", list, String(pid)], { stdio: "ignore" });
  const none = { pinned: "not pinned", unpin() {} };
  if (pids.length === 0 || cpus < 2) return none;
  const last = cpus - 1;
  try {
    for (const pid of pids) place(pid, String(last));
    place(process.pid, `0-${last - 1}`);
  } catch {
    return { ...none, pinned: "not pinned (no taskset)" };
  }
  return {
    pinned: `workerd pinned to CPU ${last}, the clients to ${last === 1 ? "CPU 0" : `CPUs 0-${last - 1}`}`,
    unpin() {
      for (const pid of [...pids, process.pid]) place(pid, `0-${last}`);
    },
  };
}

/**
 * @returns the CPU time the processes used so far, in ms; NaN without /proc. Read from each
 * thread's `/proc/<pid>/task/<tid>/schedstat` (time on a CPU, in ns), so a one-second window
 * is not rounded to the 10 ms ticks of `/proc/<pid>/stat` (±1.5 % of a window at 0.7 s of
 * CPU); `stat`'s user + system ticks where schedstat is missing.
 */
export function cpuMs(pids: readonly number[]): number {
  if (pids.length === 0) return Number.NaN;
  let ms = 0;
  for (const pid of pids) ms += schedstatMs(pid) ?? ticksMs(pid);
  return ms;
}

/** @returns the on-CPU time of every thread of `pid`, in ms, or `undefined` without schedstat */
function schedstatMs(pid: number): number | undefined {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread exited meanwhile
      }
    }
  } catch {
    return undefined;
  }
  return Number.isFinite(ns) && ns > 0 ? ns / 1e6 : undefined;
}

/** @returns the user + system time of `pid` from `/proc/<pid>/stat`, in ms */
function ticksMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000; // utime, stime (fields 14 and 15 of stat)
}

/** What one closed-loop window measured. */
export interface LoadWindow {
  /** Replies received within the window, per second. */
  perSecond: number;
  /** workerd CPU time per reply, in µs (NaN without /proc). */
  cpuPerMessageUs: number;
  /** Replies received in all, those after the window's end (while the loop drained) included. */
  replies: number;
}

/**
 * Closed loop: every client sends a frame and sends the next one as soon as a reply
 * arrives (one outstanding frame per client), for `ms`. Stops by itself: once the
 * window closes no new frame is sent, and the outstanding replies are drained (bounded).
 */
export async function closedLoop(clients: readonly Client[], frame: (n: number) => string, ms: number, pids: readonly number[]): Promise<LoadWindow> {
  /** Every reply, those drained after the window included. */
  let replies = 0;
  let open = true;
  let n = 0;
  const drained = clients.map(
    (client) =>
      new Promise<void>((resolve) => {
        client.onMessage = () => {
          replies++;
          if (!open) {
            client.onMessage = () => {};
            return resolve();
          }
          client.ws.send(frame(n++));
        };
      }),
  );
  const cpuBefore = cpuMs(pids);
  const start = performance.now();
  for (const client of clients) client.ws.send(frame(n++));
  await sleep(ms);
  open = false;
  const elapsed = performance.now() - start;
  const cpu = cpuMs(pids) - cpuBefore;
  const count = replies;
  await Promise.race([Promise.all(drained), sleep(5_000)]);
  for (const client of clients) client.onMessage = () => {};
  return { perSecond: (count / elapsed) * 1000, cpuPerMessageUs: (cpu * 1000) / count, replies };
}

/** V8 flags that let `perf` name a worker's JavaScript frames (give them to startBenchWorker's `v8Flags` before recording). */
export const PERF_V8_FLAGS = "--perf-basic-prof --interpreted-frames-native-stack";

/**
 * Starts `perf record -g` on the workerd processes `pids`, writing to `out`, and waits `attachMs` for it
 * to attach. @returns stop(): ends the recording (SIGINT, as perf expects) once perf has written its file
 */
export async function recordPerf(pids: readonly number[], out: string, hz: number, attachMs: number): Promise<{ stop(): Promise<void> }> {
  const perf = spawn("perf", ["record", "-F", String(hz), "-g", "-o", out, "-p", pids.join(",")], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => perf.once("exit", () => resolve()));
  await sleep(attachMs);
  return {
    stop() {
      perf.kill("SIGINT");
      return exited;
    },
  };
}

export { sleep };

/** What one open-loop window measured. */
export interface RateWindow {
  /** Replies received per second. */
  perSecond: number;
  /** workerd CPU time per reply, in µs (NaN without /proc). */
  cpuPerMessageUs: number;
  /** Send → reply latencies, in ms. */
  latencies: number[];
}

/**
 * Open loop: frames are sent at a fixed total `rate` (frames per second, spread round-robin over
 * the clients, in ticks of 5 ms) for `ms`, whatever the replies do, so every implementation gets
 * the same load and workerd's CPU time per reply compares like for like. `key` names the frame
 * a reply answers (the number in it). Stops by itself; late replies are waited for (bounded).
 */
export async function openLoop(
  clients: readonly Client[],
  frame: (n: number) => string,
  key: (reply: string) => number,
  rate: number,
  ms: number,
  pids: readonly number[],
): Promise<RateWindow> {
  const sent = new Map<number, number>();
  const latencies: number[] = [];
  for (const client of clients) {
    client.onMessage = (data) => {
      const at = sent.get(key(data));
      if (at === undefined) return;
      latencies.push(performance.now() - at);
      sent.delete(key(data));
    };
  }
  const tick = 5;
  const cpuBefore = cpuMs(pids);
  const start = performance.now();
  let n = 0;
  let next = 0;
  while (performance.now() - start < ms) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    for (; n < due; n++, next = (next + 1) % clients.length) {
      sent.set(n, performance.now());
      clients[next]!.ws.send(frame(n));
    }
    await sleep(tick);
  }
  for (let waited = 0; sent.size > 0 && waited < 5_000; waited += 10) await sleep(10);
  const elapsed = performance.now() - start;
  const cpu = cpuMs(pids) - cpuBefore;
  for (const client of clients) client.onMessage = () => {};
  return { perSecond: (latencies.length / elapsed) * 1000, cpuPerMessageUs: (cpu * 1000) / latencies.length, latencies };
}
