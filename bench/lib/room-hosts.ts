// One logical room whose shards live in several workerd processes (the scale bench's
// `--scale-hosts`): K host sessions of bench/worker-rooms-hosts/ (`rooms-host-<i>`, each holding
// the shards `SHARD_<i>`) and one coordinator session (`rooms-coordinator`, holding the sequencer),
// each its own `wrangler dev` session and workerd process, binding each other through one dev
// registry folder (`script_name`). Their wrangler configs are written to a temporary folder.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { workerdPids } from "./load.ts";
import { type StartedWorker, startBenchWorker } from "./worker.ts";

const MAIN = new URL("../worker-rooms-hosts/worker.ts", import.meta.url).pathname;
const COORDINATOR = "rooms-coordinator";
const hostName = (i: number) => `rooms-host-${i}`;

/** The started room processes. */
export interface RoomHosts {
  /** Each host's own address; host i holds the shards whose index is i modulo the host count. */
  hosts: URL[];
  /** The coordinator's address (its `/publish/<room>` calls publishToRoom). */
  coordinator: URL;
  /** Every workerd process the sessions started (the hosts', the coordinator's and wrangler's proxies'). */
  pids: number[];
  /** Each host's workerd processes, in host order. */
  hostPids: number[][];
  dispose(): Promise<void>;
}

/** @returns the wrangler config of host `i` of `count`, or of the coordinator (`i` = -1) */
function config(i: number, count: number): object {
  const base = { main: MAIN, compatibility_date: "2026-11-01", compatibility_flags: ["nodejs_compat"] };
  if (i < 0) {
    return {
      ...base,
      name: COORDINATOR,
      durable_objects: {
        bindings: [
          { name: "ROOM_SEQUENCER", class_name: "ScaleSequencer" },
          ...Array.from({ length: count }, (_, h) => ({ name: `SHARD_${h}`, class_name: "ScaleShard", script_name: hostName(h) })),
        ],
      },
      migrations: [{ tag: "v1", new_sqlite_classes: ["ScaleSequencer"] }],
    };
  }
  return {
    ...base,
    name: hostName(i),
    vars: { HOST_BINDING: `SHARD_${i}` },
    durable_objects: {
      bindings: [
        { name: `SHARD_${i}`, class_name: "ScaleShard" },
        { name: "ROOM_SEQUENCER", class_name: "ScaleSequencer", script_name: COORDINATOR },
      ],
    },
    migrations: [{ tag: "v1", new_sqlite_classes: ["ScaleShard"] }],
  };
}

/** Starts `count` hosts and the coordinator, one after another, sharing a fresh dev registry. */
export async function startRoomHosts(count: number): Promise<RoomHosts> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "dokit-room-hosts-"));
  const registry = path.join(dir, "registry");
  const started: StartedWorker[] = [];
  const hostPids: number[][] = [];
  const dispose = async () => {
    for (const worker of started.reverse()) await worker.dispose().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = -1; i < count; i++) {
      const file = path.join(dir, `${i < 0 ? COORDINATOR : hostName(i)}.json`);
      writeFileSync(file, JSON.stringify(config(i, count), null, 2));
      const before = new Set(workerdPids());
      started.push(await startBenchWorker(file, { registry }));
      if (i >= 0) hostPids.push(workerdPids().filter((pid) => !before.has(pid)));
    }
  } catch (error) {
    await dispose();
    throw error;
  }
  return { coordinator: started[0]!.direct, hosts: started.slice(1).map((w) => w.direct), pids: workerdPids(), hostPids, dispose };
}
