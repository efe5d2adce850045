// Yjs bench: dokit's YjsDocument beside y-partyserver's YServer (bench/worker/yjs.ts), the same
// document and the same clients, interleaved round by round (the order alternates). Raw `ws`
// clients speak the y-protocols wire: each sends sync step 1, an update as [0, 2, update].
//   first sync       a new client: open → its step 1 [0,0,0x01,0x00] → the step 2 that answers it, 1 MB and 10 MB documents
//   fan-out          101 clients; one sends an update; until the other 100 received it (p50/p99 over rounds)
//   wake + load      a 10 MB document evicted as hibernation does; → GET size (the document loaded), → a new client's first sync
//   stored bytes     200 one-character updates, then compaction (dokit) / onSave (y-partyserver)
//   CPU per update   a fresh room, 1 sender + 10 watchers; 1,000 updates one at a time (each until a watcher has it), then
//                    2.5 s for y-partyserver's debounced onSave; workerd's CPU (its threads' schedstat) / 1,000, pinned
//   durability       per update: watcher + sender connect, sender sends it, acknowledged once the watcher receives it,
//                    then ctx.abort(); at the end a new client syncs and the acknowledged updates present are counted
// `node bench/yjs.ts [--quick] [--only=sync,fanout,wake,bytes,cpu,abort]` alone, or `yjsBench()` from bench/run.ts (`--only=yjs`).
import { writeFileSync, mkdirSync } from "node:fs";
import WebSocket from "ws";
import { cpuMs, pinWorkerd, workerdPids } from "./lib/load.ts";
import { quietWrangler } from "./lib/cli.ts";
import { pairedRatio, quantile } from "./lib/stats.ts";
import { startBenchWorker } from "./lib/worker.ts";
import { commandLine, fromPairs, recordRun, type RunResult } from "./lib/results.ts";

// The clients' yjs: the same package the worker bundles (one copy: dokit/yjs and y-partyserver share it).
import * as Y from "yjs";

const IMPLS = ["dokit", "party"] as const;
type Impl = (typeof IMPLS)[number];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One row: dokit's and y-partyserver's figure, and dokit over y-partyserver (paired where rounds pair). */
export interface YjsFigure {
  measure: string;
  stat: string;
  unit: string;
  dokit: number;
  party: number;
  ratio: number;
  target?: string;
  samples?: number;
}

/** A raw y-protocols client: every binary frame kept, with waiters on a predicate. */
class YClient {
  readonly frames: Uint8Array[] = [];
  #waiters: { match: (m: Uint8Array) => boolean; resolve: (at: number) => void }[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<void>;
  readonly ws: WebSocket;
  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.binaryType = "nodebuffer";
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return;
      const at = performance.now();
      const m = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      this.frames.push(m);
      this.#waiters = this.#waiters.filter((w) => (w.match(m) ? (w.resolve(at), false) : true));
    });
    this.opened = new Promise((resolve, reject) => (ws.once("open", () => resolve()), ws.once("error", reject)));
    this.closed = new Promise((resolve) => ws.once("close", () => resolve()));
  }
  /** @returns the time the first frame matching arrives (from now on), or rejects after `timeoutMs` */
  next(match: (m: Uint8Array) => boolean, timeoutMs = 30_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out: ${this.ws.url}`)), timeoutMs);
      this.#waiters.push({ match, resolve: (at) => (clearTimeout(timer), resolve(at)) });
    });
  }
  close(): Promise<void> {
    this.ws.close();
    return this.closed;
  }
}

const isStep2 = (m: Uint8Array) => m[0] === 0 && m[1] === 1;
const isUpdate = (m: Uint8Array) => m[0] === 0 && m[1] === 2;
const STEP1_EMPTY = Uint8Array.from([0, 0, 1, 0]);

/** @returns `[0, 2, varUint length, update]` */
function updateMessage(update: Uint8Array): Uint8Array {
  const length: number[] = [];
  let rest = update.byteLength;
  while (rest > 0x7f) (length.push(0x80 | (rest & 0x7f)), (rest >>>= 7));
  length.push(rest);
  return Uint8Array.from([0, 2, ...length, ...update]);
}

/** @returns the update body of a `[0, 1|2, varUint8Array]` message */
function syncPayload(m: Uint8Array): Uint8Array {
  let at = 2;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = m[at++];
    if (byte === undefined) throw new Error("a sync message cut short");
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  return m.subarray(at, at + length);
}

/** A writer whose every edit gives one small update (its own client id, so any room accepts it). */
function writer(): { next(text: string): Uint8Array } {
  const doc = new Y.Doc();
  const pending: Uint8Array[] = [];
  doc.on("update", (u: Uint8Array) => pending.push(u));
  return {
    next(text) {
      const body = doc.getText("body");
      body.insert(body.length, text);
      return pending.shift() as Uint8Array;
    },
  };
}

export async function yjsBench(options: { quick?: boolean; log?: (m: string) => void; only?: string[] } = {}): Promise<{ figures: YjsFigure[]; text: string }> {
  const quick = options.quick ?? false;
  const has = (part: string) => !options.only || options.only.includes(part);
  const log = options.log ?? ((m: string) => process.stderr.write(`[yjs] ${m}\n`));
  const scale = (n: number) => (quick ? Math.max(3, Math.ceil(n / 5)) : n);
  const run = Date.now().toString(36);
  const worker = await startBenchWorker(new URL("./worker/wrangler.yjs.jsonc", import.meta.url).pathname);
  const base = worker.direct;
  const wsUrl = (impl: Impl, name: string) => `ws://${base.host}/yjs/${impl}/${name}`;
  const open = async (impl: Impl, name: string) => {
    const c = new YClient(new WebSocket(wsUrl(impl, name), { perMessageDeflate: false }));
    await c.opened;
    return c;
  };
  const call = async (impl: Impl, name: string, action: string, method = "GET") => {
    const response = await fetch(new URL(`/yjs/${impl}/${name}/${action}`, base), { method });
    if (!response.ok) throw new Error(`${impl} ${action}: ${response.status} ${await response.text()}`);
    return response;
  };
  const size = async (impl: Impl, name: string) =>
    (await (await call(impl, name, "size")).json()) as { length: number; bytes: number; databaseSize: number; instance: string };
  const order = (round: number): readonly Impl[] => (round % 2 ? ["party", "dokit"] : ["dokit", "party"]);
  const figures: YjsFigure[] = [];
  const push = (measure: string, stat: string, unit: string, dokit: number, party: number, target?: string, paired?: number, samples?: number) =>
    figures.push({ measure, stat, unit, dokit, party, ratio: paired ?? dokit / party, target, samples });

  /** Timed first sync of a new client: open → step 2, in ms. */
  const firstSync = async (impl: Impl, name: string): Promise<number> => {
    const start = performance.now();
    const c = await open(impl, name);
    const got = c.next(isStep2);
    c.ws.send(STEP1_EMPTY);
    const at = await got;
    await c.close();
    return at - start;
  };

  try {
    // ---- first sync, 1 MB and 10 MB
    for (const mb of has("sync") ? [1, 10] : []) {
      log(`first sync, ${mb} MB`);
      const name = `sync${mb}-${run}`;
      for (const impl of IMPLS) {
        await call(impl, name, `fill?mb=${mb}`, "POST");
        await firstSync(impl, name); // warm-up
      }
      const samples = { dokit: [] as number[], party: [] as number[] };
      for (let round = 0; round < scale(mb === 1 ? 30 : 12); round++) {
        for (const impl of order(round)) samples[impl].push(await firstSync(impl, name));
      }
      push(`first sync, ${mb} MB document`, "median", "ms", quantile(samples.dokit, 0.5), quantile(samples.party, 0.5), "≤ 1.0×", pairedRatio(samples.dokit, samples.party), samples.dokit.length);
    }

    // ---- fan-out to 100
    if (has("fanout")) {
      log("fan-out to 100");
      const clients = {} as Record<Impl, YClient[]>;
      for (const impl of IMPLS) {
        const name = `fan-${run}`;
        clients[impl] = [];
        for (let i = 0; i < 101; i += 25) clients[impl].push(...(await Promise.all(Array.from({ length: Math.min(25, 101 - i) }, () => open(impl, name)))));
      }
      // A writer per room: an update whose predecessor a room never saw stays pending in Yjs, unrelayed.
      const writers = { dokit: writer(), party: writer() };
      const samples = { dokit: [] as number[], party: [] as number[] };
      const rounds = scale(60);
      for (let round = -5; round < rounds; round++) {
        for (const impl of order(round)) {
          const [sender, ...others] = clients[impl];
          const arrivals = Promise.all(others.map((c) => c.next(isUpdate)));
          const start = performance.now();
          sender?.ws.send(updateMessage(writers[impl].next("x")));
          const ats = await arrivals;
          if (round >= 0) samples[impl].push(Math.max(...ats) - start);
        }
      }
      for (const impl of IMPLS) await Promise.all(clients[impl].map((c) => c.close()));
      push("fan-out of an update to 100 clients", "p50", "ms", quantile(samples.dokit, 0.5), quantile(samples.party, 0.5), "≤ 1.0×", pairedRatio(samples.dokit, samples.party), samples.dokit.length);
      push("fan-out of an update to 100 clients", "p99", "ms", quantile(samples.dokit, 0.99), quantile(samples.party, 0.99));
    }

    // ---- wake + load of 10 MB
    if (has("wake")) {
      log("wake + load, 10 MB");
      const name = `wake10-${run}`;
      for (const impl of IMPLS) await call(impl, name, "fill?mb=10", "POST");
      const read = { dokit: [] as number[], party: [] as number[] };
      const synced = { dokit: [] as number[], party: [] as number[] };
      let stale = 0;
      for (let round = 0; round < scale(12); round++) {
        for (const impl of order(round)) {
          const before = (await size(impl, name)).instance;
          await call(impl, name, "").catch(() => undefined);
          await (await fetch(new URL(`/yjs-evict/${impl}/${name}`, base))).text();
          let start = performance.now();
          const after = await size(impl, name);
          read[impl].push(performance.now() - start);
          if (after.instance === before || after.length !== 10 * 1024 * 1024) stale++;
          await (await fetch(new URL(`/yjs-evict/${impl}/${name}`, base))).text();
          start = performance.now();
          synced[impl].push(await firstSync(impl, name));
        }
      }
      if (stale > 0) throw new Error(`${stale} evictions did not give a fresh instance with the whole document`);
      push("wake + load 10 MB → GET (server reads it)", "median", "ms", quantile(read.dokit, 0.5), quantile(read.party, 0.5), undefined, pairedRatio(read.dokit, read.party), read.dokit.length);
      push("wake + load 10 MB → new client's first sync", "median", "ms", quantile(synced.dokit, 0.5), quantile(synced.party, 0.5), undefined, pairedRatio(synced.dokit, synced.party), synced.dokit.length);
    }

    // ---- stored bytes
    if (has("bytes")) {
      log("stored bytes");
      const n = 200;
      const stored = {} as Record<Impl, { perUpdate: number; afterUpdates: number; compacted: number; database: number }>;
      for (const impl of IMPLS) {
        const name = `bytes-${run}`;
        const [sender, watcher] = [await open(impl, name), await open(impl, name)];
        const empty = await size(impl, name);
        const w = writer();
        for (let i = 0; i < n; i++) {
          const got = (watcher as YClient).next(isUpdate);
          sender.ws.send(updateMessage(w.next("x")));
          await got;
        }
        await sleep(2_500); // y-partyserver's debounced onSave (2 s)
        const after = await size(impl, name);
        await call(impl, name, "compact", "POST");
        const compacted = await size(impl, name);
        stored[impl] = { perUpdate: (after.bytes - empty.bytes) / n, afterUpdates: after.bytes, compacted: compacted.bytes, database: compacted.databaseSize };
        await Promise.all([sender.close(), (watcher as YClient).close()]);
      }
      push(`stored bytes after ${n} one-character updates, per update`, "bytes", "B", stored.dokit.perUpdate, stored.party.perUpdate);
      push("stored bytes after compaction (onSave)", "bytes", "B", stored.dokit.compacted, stored.party.compacted);
      push("SQLite database size after compaction", "bytes", "B", stored.dokit.database, stored.party.database);
    }

    // ---- CPU per update
    if (has("cpu")) {
      log("CPU per update");
      const pids = workerdPids();
      const pin = pinWorkerd(pids);
      const k = quick ? 300 : 1_000;
      const samples = { dokit: [] as number[], party: [] as number[] };
      try {
        for (let round = 0; round < scale(8); round++) {
          for (const impl of order(round)) {
            const name = `cpu-${run}-${round}`;
            const clients: YClient[] = [];
            for (let i = 0; i < 11; i++) clients.push(await open(impl, name));
            const [sender, watcher] = clients as [YClient, YClient];
            await sleep(200);
            const w = writer();
            const cpu0 = cpuMs(pids);
            for (let i = 0; i < k; i++) {
              const got = watcher.next(isUpdate);
              sender.ws.send(updateMessage(w.next("x")));
              await got;
            }
            await sleep(2_500); // y-partyserver's debounced onSave fires 2 s after the last update
            samples[impl].push((cpuMs(pids) - cpu0) / k);
            await Promise.all(clients.map((c) => c.close()));
            await sleep(200);
          }
        }
      } finally {
        pin.unpin();
      }
      push(`CPU per update (workerd, ${k} updates + 2.5 s)`, "median", "ms", quantile(samples.dokit, 0.5), quantile(samples.party, 0.5), "≤ 1.10×", pairedRatio(samples.dokit, samples.party), samples.dokit.length);
    }

    // ---- durability
    if (has("abort")) {
      log("durability: abort after every message");
      const n = quick ? 8 : 20;
      const counts = {} as Record<Impl, { acknowledged: number; present: number }>;
      for (const impl of IMPLS) {
        const name = `abort-${run}`;
        const acknowledged: string[] = [];
        for (let i = 0; i < n; i++) {
          // A new writer (client id) per update: none depends on an earlier one, so a lost update
          // leaves the next one applicable (Yjs holds back an update whose predecessor it lacks).
          const w = writer();
          const [watcher, sender] = await Promise.all([open(impl, name), open(impl, name)]);
          const word = `w${i};`;
          const got = watcher.next(isUpdate, 5_000).then(
            () => true,
            () => false,
          );
          sender.ws.send(updateMessage(w.next(word)));
          if (await got) acknowledged.push(word);
          await call(impl, name, "abort", "POST").catch(() => undefined);
          // The abort closes both sockets; one still open after 5 s is dropped here.
          await Promise.race([Promise.all([watcher.closed, sender.closed]), sleep(5_000)]);
          if (watcher.ws.readyState !== WebSocket.CLOSED || sender.ws.readyState !== WebSocket.CLOSED) (log(`${impl}: sockets still open 5 s after the abort`), watcher.ws.terminate(), sender.ws.terminate());
        }
        const reader = await open(impl, name);
        const got = reader.next(isStep2);
        reader.ws.send(STEP1_EMPTY);
        const doc = new Y.Doc();
        await got;
        Y.applyUpdate(doc, syncPayload(reader.frames.find(isStep2) as Uint8Array));
        const text = doc.getText("body").toString();
        counts[impl] = { acknowledged: acknowledged.length, present: acknowledged.filter((word) => text.includes(word)).length };
        await reader.close();
      }
      push(`durability: ${n} updates, acknowledged (a watcher received it)`, "count", "", counts.dokit.acknowledged, counts.party.acknowledged);
      push("durability: acknowledged and present after abort-after-every-message", "count", "", counts.dokit.present, counts.party.present, "all");
    }
  } finally {
    await worker.dispose();
  }
  const out = new URL("./results/", import.meta.url);
  mkdirSync(out, { recursive: true });
  writeFileSync(new URL("latest-yjs.json", out), `${JSON.stringify({ date: new Date().toISOString(), quick, figures }, null, 2)}\n`);
  const text = `Yjs (dokit's YjsDocument beside y-partyserver's YServer; dokit/y-partyserver, paired per round where rounds pair; bench/yjs.ts)\n\n${yjsTable(figures)}`;
  return { figures, text };
}

const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3));

/** @returns the figures as a Markdown table */
export function yjsTable(figures: readonly YjsFigure[]): string {
  const rows = figures.map((f) => {
    const unit = f.unit ? ` ${f.unit}` : "";
    const missed = f.target?.startsWith("≤") && f.ratio > Number(f.target.slice(2, -1)) ? " MISSED" : "";
    if (f.stat === "count") return `| ${f.measure} | count | ${f.dokit} | ${f.party} | – | ${f.target ?? "–"} |`;
    return `| ${f.measure} | ${f.stat} | ${fmt(f.dokit)}${unit} | ${fmt(f.party)}${unit} | ${f.ratio.toFixed(2)}×${missed} | ${f.target ?? "–"} |`;
  });
  return ["| measure | stat | dokit | y-partyserver | dokit/y-partyserver | target |", "| --- | --- | --- | --- | --- | --- |", ...rows].join("\n");
}

/** @returns a run's figures as the yjs result file's rows: dokit, y-partyserver and their ratio */
export function yjsRun(figures: readonly YjsFigure[]): Omit<RunResult, "command" | "quick"> {
  return { measure: "yjs", title: "Yjs", columns: ["dokit", "y-partyserver", "dokit/y-partyserver"], figures: fromPairs(figures, ["dokit", "party"], ["dokit", "y-partyserver"]) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  quietWrangler();
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const t0 = performance.now();
  const quick = process.argv.includes("--quick");
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice(7).split(",");
  const { text, figures } = await yjsBench({ quick, only });
  console.log(`\n${text}\n\nyjs bench took ${((performance.now() - t0) / 1000).toFixed(0)} s; results: bench/results/latest-yjs.json`);
  // A run of some of its parts (--only) is not the measure's result.
  if (!only) console.log(`result file: ${recordRun({ ...yjsRun(figures), command: commandLine("node bench/yjs.ts"), quick }).pathname}`);
}
