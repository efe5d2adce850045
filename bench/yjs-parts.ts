// Splits the yjs measure's CPU per update (bench/yjs.ts) into parts: dokit's YjsDocument and
// y-partyserver's YServer beside hand-written reference rooms (worker/yjs-raw.ts) that apply and
// relay with no library (`raw`) and also insert each update into SQLite (`sql`), paired round by
// round in rotating order. Each room: 1 sender + `--watchers` watchers, `--updates` updates one at a time
// (each until a watcher has it); workerd's CPU over those updates alone (`updates`), then over the
// 2.5 s after (`after`: y-partyserver's debounced onSave, idle for the others), per update.
//   node bench/yjs-parts.ts [--rooms=dokit,party,raw,sql] [--rounds=6] [--updates=1000] [--watchers=10]
//   [--burst=n]: the updates go n at a time, back to back, each burst until the watchers have all n (do they share commits?)
//   [--all]: each update waits until every watcher has it, and its latency (send → last arrival) is reported (fan-out)
//   [--perf=<dir>]: a `perf record` of workerd per room over its first round's updates (see DIAGNOSTICS.md)
import WebSocket from "ws";
import { arg, quietWrangler } from "./lib/cli.ts";
import { cpuMs, pinWorkerd, PERF_V8_FLAGS, recordPerf, workerdPids } from "./lib/load.ts";
import { quantile } from "./lib/stats.ts";
import { startBenchWorker } from "./lib/worker.ts";

import * as Y from "yjs";
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const rooms = arg("rooms", "dokit,party,raw,sql").split(",");
const rounds = Number(arg("rounds", "6"));
const k = Number(arg("updates", "1000"));
const watchers = Number(arg("watchers", "10"));
const perfDir = arg("perf", "");
const all = process.argv.includes("--all");
const burst = Number(arg("burst", "1"));
/** Where each room lives: its binding's path segment and its name's prefix. */
const ROUTE: Record<string, [string, string]> = { dokit: ["dokit", "d-"], party: ["party", "p-"], raw: ["raw", "raw-"], sql: ["raw", "sql-"], sync: ["raw", "sync-"], read: ["raw", "read-"], pk: ["raw", "pk-"], tx: ["raw", "tx-"] };

function updateMessage(update: Uint8Array): Uint8Array {
  const length: number[] = [];
  let rest = update.byteLength;
  while (rest > 0x7f) (length.push(0x80 | (rest & 0x7f)), (rest >>>= 7));
  length.push(rest);
  return Uint8Array.from([0, 2, ...length, ...update]);
}

/** @returns once `ws` has received `n` more messages */
function arrivals(ws: WebSocket, n: number): Promise<void> {
  return new Promise((resolve) => {
    let left = n;
    const on = () => {
      if (--left > 0) return;
      ws.off("message", on);
      resolve();
    };
    ws.on("message", on);
  });
}

quietWrangler();
const worker = await startBenchWorker(new URL("./worker/wrangler.yjs.jsonc", import.meta.url).pathname, perfDir ? { v8Flags: PERF_V8_FLAGS } : {});
const pids = workerdPids();
const pin = pinWorkerd(pids);
const samples: Record<string, { updates: number[]; after: number[]; latency: number[] }> = Object.fromEntries(rooms.map((r) => [r, { updates: [], after: [], latency: [] }]));
try {
  for (let round = 0; round < rounds; round++) {
    const order = rooms.map((_, i) => rooms[(i + round) % rooms.length] as string);
    for (const room of order) {
      const [kind, prefix] = ROUTE[room] as [string, string];
      const url = `ws://${worker.direct.host}/yjs/${kind}/${prefix}${round}-${Date.now().toString(36)}`;
      const clients: WebSocket[] = [];
      for (let i = 0; i <= watchers; i++) {
        const ws = new WebSocket(url, { perMessageDeflate: false });
        await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
        clients.push(ws);
      }
      const [sender, ...others] = clients as [WebSocket, WebSocket];
      const waitFor = all ? others : others.slice(0, 1);
      await sleep(200);
      const doc = new Y.Doc();
      const pending: Uint8Array[] = [];
      doc.on("update", (u: Uint8Array) => pending.push(u));
      const body = doc.getText("body");
      const perf = perfDir && round === 0 ? await recordPerf(pids, `${perfDir}/${room}.data`, 4999, 500) : undefined;
      const cpu0 = cpuMs(pids);
      for (let i = 0; i < k; i += burst) {
        const got = Promise.all(waitFor.map((w) => arrivals(w, burst)));
        const messages: Uint8Array[] = [];
        for (let j = 0; j < burst; j++) (body.insert(body.length, "x"), messages.push(updateMessage(pending.shift() as Uint8Array)));
        const start = performance.now();
        for (const message of messages) sender.send(message);
        await got;
        samples[room]?.latency.push(performance.now() - start);
      }
      const cpu1 = cpuMs(pids);
      await perf?.stop();
      await sleep(2_500);
      const cpu2 = cpuMs(pids);
      samples[room]?.updates.push((cpu1 - cpu0) / k);
      samples[room]?.after.push((cpu2 - cpu1) / k);
      for (const ws of clients) ws.close();
      await sleep(300);
    }
  }
} finally {
  pin.unpin();
  await worker.dispose();
}
const base = rooms.includes("party") ? "party" : (rooms[0] as string);
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
console.log(`\nCPU per update, workerd: ${k} updates (${burst} at a time) × ${rounds} rounds, 1 sender + ${watchers} watchers; ${pin.pinned}\n`);
console.log(`| room | updates (median) | per round | after (2.5 s) | total | ratio to ${base} (total, paired) | latency p50 / p99 |`);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const room of rooms) {
  const s = samples[room] as { updates: number[]; after: number[]; latency: number[] };
  const b = samples[base] as { updates: number[]; after: number[] };
  const total = s.updates.map((u, i) => u + (s.after[i] as number));
  const ratios = total.map((t, i) => t / ((b.updates[i] as number) + (b.after[i] as number)));
  console.log(`| ${room} | ${us(quantile(s.updates, 0.5))} | ${s.updates.map((u) => (u * 1000).toFixed(0)).join(" ")} | ${us(quantile(s.after, 0.5))} | ${us(quantile(total, 0.5))} | ${quantile(ratios, 0.5).toFixed(2)}× | ${quantile(s.latency, 0.5).toFixed(2)} / ${quantile(s.latency, 0.99).toFixed(2)} ms |`);
}
