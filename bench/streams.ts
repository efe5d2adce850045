// Streams bench: dokit/streams against npm agents@0.32.0's agents/streams in the same workerd
// (bench/worker-streams/worker.ts), interleaved round by round.
//   append throughput: 1,000 chunks of 100 B, and of 10 KB, appended in one call; chunks/s
//     (the call's time less an empty call's round trip to the same object right after), median of
//     the rounds; and the rows the object's SQL wrote per 1,000 chunks.
//   replay: 10,000 chunks of 100 B, then the stream closed; a new reader's SSE response, from the
//     request until its last byte (the `done` event), median of the rounds.
//   live tail: 1,000 WebSocket readers of one stream (dokit's `dokit_stream_read`) beside 1,000 of a
//     raw object that stores each chunk with one INSERT and sends the same frame to every socket by
//     hand, appended to in interleaved rounds; from the append request until the last reader has the
//     chunk, p50 and p99 of the appends; and workerd's CPU per append, read from /proc (liveTail).
// `node bench/streams.ts [--quick] [--rows-only]` alone, or `streamsBench()` from bench/run.ts; either writes
// the result file bench/results/streams.json (lib/results.ts; a --quick run bench/results/quick/streams.json).
//   --rows-only: the result file keeps only the rows-written figures (exact counts, so valid from a loaded machine).
import { cpuMs, listenerPid, sleep } from "./lib/load.ts";
import { ROWS_ONLY_NOTE, type RunResult, type Target } from "./lib/results.ts";
import { figureText, runStandalone, type VersusRef, withWorker } from "./lib/standalone.ts";
import { middle as median, rank as percentile } from "./lib/stats.ts";

/** One measure, for both implementations (`ratio`: dokit over ref; `higherIsBetter` for chunks/s). */
export interface StreamsFigure extends VersusRef {
  /** Set when the other side is the raw object, not the reference (the live tail): `ref` then holds raw's figure. */
  vsRaw?: true;
}

/**
 * @returns the streams measure's result (lib/results.ts): dokit beside the reference (append, rows,
 * replay) and beside the raw object (live tail), with the targets of bench/README.md; `rowsOnly` keeps the row counts
 */
export function streamsRun(figures: readonly StreamsFigure[], rowsOnly = false): Omit<RunResult, "command" | "quick"> {
  const kept = rowsOnly ? figures.filter((f) => f.unit === "rows") : figures;
  return {
    measure: "streams",
    title: "Streams",
    columns: ["dokit", "ref", "raw", "dokit/ref", "dokit/raw"],
    figures: kept.map((f) => {
      const other = f.vsRaw ? "raw" : "ref";
      const ratioColumn = `dokit/${other}`;
      const target: Target | undefined = f.vsRaw
        ? { column: ratioColumn, at: "≤", value: 1.1 }
        : f.unit === "rows"
          ? { column: ratioColumn, at: "≤", value: 1 }
          : f.higherIsBetter
            ? { column: ratioColumn, at: "≥", value: 1 }
            : undefined;
      return { name: f.measure, unit: f.unit, ...(target && { target }), values: { dokit: f.dokit, [other]: f.ref, [ratioColumn]: f.ratio }, ...(f.note && { note: f.note }) };
    }),
    ...(rowsOnly ? { keep: 1, notes: [ROWS_ONLY_NOTE] } : {}),
  };
}

/** The readers of one object's live tail, and how to append to it. */
interface Tail {
  /** Appends one chunk of 100 B. @returns ms from the request until the last reader received it */
  append(): Promise<number>;
  close(): void;
}

/**
 * Opens `readers` WebSockets on one object of `impl` (dokit's read stream "t" from its first chunk,
 * waiting until each is up to date; raw's receive every chunk).
 */
async function openTail(base: URL, impl: "raw" | "dokit", name: string, readers: number): Promise<Tail> {
  const { WebSocket } = await import("ws");
  const url = new URL(`/${impl}/${name}/ws`, base);
  url.protocol = "ws:";
  const request = async () => {
    const response = await fetch(new URL(`/${impl}/${name}/tail?bytes=100`, base));
    return (await response.json()) as number;
  };
  await request(); // the stream exists before readers ask for it
  const got = new Map<number, number>();
  let waiting: { seq: number; resolve: () => void } | undefined;
  let upToDate = 0;
  const sockets = await Promise.all(
    Array.from({ length: readers }, () => new Promise<InstanceType<typeof WebSocket>>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.on("open", () => {
        if (impl === "dokit") ws.send(JSON.stringify({ type: "dokit_stream_read", stream: "t", from: 1 }));
        resolve(ws);
      });
      ws.on("error", reject);
      ws.on("message", (data: Buffer) => {
        const text = data.toString();
        if (text.includes('"dokit_stream_up_to_date"')) upToDate++;
        const match = /"seq":(\d+)/.exec(text);
        if (!match) return;
        const seq = Number(match[1]);
        const n = (got.get(seq) ?? 0) + 1;
        got.set(seq, n);
        if (n === readers && waiting?.seq === seq) waiting.resolve();
      });
    })),
  );
  while (impl === "dokit" && upToDate < readers) await new Promise((resolve) => setTimeout(resolve, 10));
  return {
    async append() {
      const t = performance.now();
      const seq = await new Promise<number>((resolve) => {
        void request().then((seq) => {
          if ((got.get(seq) ?? 0) === readers) return resolve(seq);
          waiting = { seq, resolve: () => resolve(seq) };
        });
      });
      got.delete(seq);
      return performance.now() - t;
    },
    close() {
      for (const ws of sockets) ws.close();
    },
  };
}

/** What the live tail measured, per implementation. */
export interface TailResult {
  /** Per append, ms from the request until the last reader received the chunk, every round's. */
  latency: { raw: number[]; dokit: number[] };
  /** Per round, workerd's CPU µs per append, less its idle CPU over the same wall time. */
  cpu: { raw: number[]; dokit: number[] };
  /** Per round, dokit's CPU per append over raw's in the same round. */
  cpuRatio: number[];
}

/**
 * The live tail: `readers` WebSockets on a dokit object and as many on a raw one, then `rounds`
 * rounds (after one not recorded) of `appends` appends to each, one after another, the order
 * alternating. Each round's appends to one object are one CPU window: the CPU time of the user
 * worker's workerd process (`pid`: every thread's on-CPU time, lib/load.ts) over the window, less
 * what it used idle over the same wall time (a window with no request, right after), per append.
 * The readers are Node's sockets in this process, so none of their CPU is counted.
 */
export async function liveTail(base: URL, name: string, readers: number, rounds: number, appends: number, pid: number | undefined): Promise<TailResult> {
  const tails = { dokit: await openTail(base, "dokit", name, readers), raw: await openTail(base, "raw", name, readers) };
  const result: TailResult = { latency: { raw: [], dokit: [] }, cpu: { raw: [], dokit: [] }, cpuRatio: [] };
  const cpu = () => (pid === undefined ? Number.NaN : cpuMs([pid]));
  try {
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 ? (["dokit", "raw"] as const) : (["raw", "dokit"] as const);
      const window = { raw: { ms: 0, cpu: 0 }, dokit: { ms: 0, cpu: 0 } };
      for (const impl of order) {
        const cpu0 = cpu();
        const t0 = performance.now();
        for (let i = 0; i < appends; i++) {
          const ms = await tails[impl].append();
          if (round >= 0) result.latency[impl].push(ms);
        }
        window[impl] = { ms: performance.now() - t0, cpu: cpu() - cpu0 };
      }
      // The idle baseline: the same process over the round's mean window, nothing asked of it.
      const idleMs = (window.raw.ms + window.dokit.ms) / 2;
      const idle0 = cpu();
      const t0 = performance.now();
      await sleep(idleMs);
      const idleRate = (cpu() - idle0) / (performance.now() - t0);
      if (round < 0) continue;
      const perAppend = (impl: "raw" | "dokit") => ((window[impl].cpu - idleRate * window[impl].ms) * 1000) / appends;
      result.cpu.raw.push(perAppend("raw"));
      result.cpu.dokit.push(perAppend("dokit"));
      result.cpuRatio.push(perAppend("dokit") / perAppend("raw"));
    }
    return result;
  } finally {
    tails.dokit.close();
    tails.raw.close();
  }
}

/**
 * Starts the streams worker, measures, stops it.
 * @returns the figures and a printable table
 */
export async function streamsBench(options: { quick?: boolean } = {}): Promise<{ figures: StreamsFigure[]; text: string }> {
  const rounds = options.quick ? 3 : 9;
  const chunks = 1_000;
  const replayChunks = options.quick ? 2_000 : 10_000;
  return withWorker(new URL("./worker-streams/wrangler.jsonc", import.meta.url), async ({ base, call, worker }) => {
    const run = Date.now().toString(36);
    const impls = ["dokit", "ref"] as const;
    const rate = { small: { dokit: [] as number[], ref: [] as number[] }, large: { dokit: [] as number[], ref: [] as number[] } };
    const rows = { small: { dokit: 0, ref: 0 }, large: { dokit: 0, ref: 0 } };
    const replay = { dokit: [] as number[], ref: [] as number[] };
    // A warm-up round (not recorded), then interleaved rounds; the order alternates.
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 ? impls : ([...impls].reverse() as unknown as typeof impls);
      for (const impl of order) {
        for (const [size, bytes] of [
          ["small", 100],
          ["large", 10_000],
        ] as const) {
          const name = `append-${size}-${run}-${round}`;
          await call(`/${impl}/${name}/ping`);
          let t = performance.now();
          const written = await call(`/${impl}/${name}/append?n=${chunks}&bytes=${bytes}`);
          const ms = performance.now() - t;
          t = performance.now();
          await call(`/${impl}/${name}/ping`);
          const trip = performance.now() - t;
          if (round < 0) continue;
          rate[size][impl].push((chunks * 1000) / Math.max(ms - trip, 0.001));
          rows[size][impl] = written;
        }
        const name = `replay-${run}-${round}`;
        for (let done = 0; done < replayChunks; done += 1_000) await call(`/${impl}/${name}/append?n=1000&bytes=100`);
        await call(`/${impl}/${name}/close`);
        const t = performance.now();
        const response = await fetch(new URL(`/${impl}/${name}/sse`, base));
        const text = await response.text();
        const ms = performance.now() - t;
        if (!text.endsWith("event: done\ndata: {}\n\n") || !text.includes(`id: ${replayChunks - 1}\n`)) throw new Error(`${impl}: the replay did not end with every chunk and done`);
        if (round >= 0) replay[impl].push(ms);
      }
    }
    // The live tail goes straight to the user worker, as pnpm bench's clients do: through wrangler's
    // proxy worker every frame to every reader would cross a second workerd process on the same cores.
    const readers = options.quick ? 200 : 1_000;
    const tailRounds = options.quick ? 3 : 9;
    const perRound = options.quick ? 10 : 20;
    const pid = listenerPid(Number(worker.direct.port));
    if (pid === undefined) console.warn("streams: no workerd process found listening on the worker's port; CPU per append not measured");
    const tail = await liveTail(worker.direct, `tail-${run}`, readers, tailRounds, perRound, pid);
    const figure = (measure: string, unit: string, ref: number, dokit: number, higherIsBetter = false): StreamsFigure => ({
      measure,
      unit,
      ref,
      dokit,
      ratio: dokit / ref,
      ...(higherIsBetter ? { higherIsBetter } : {}),
    });
    const figures = [
      figure(`append ${chunks} chunks of 100 B (median of ${rounds})`, "/s", median(rate.small.ref), median(rate.small.dokit), true),
      figure(`append ${chunks} chunks of 10 KB (median of ${rounds})`, "/s", median(rate.large.ref), median(rate.large.dokit), true),
      figure(`rows written per ${chunks} chunks of 100 B`, "rows", rows.small.ref, rows.small.dokit),
      figure(`rows written per ${chunks} chunks of 10 KB`, "rows", rows.large.ref, rows.large.dokit),
      figure(`replay ${replayChunks} chunks over SSE to a new reader`, "ms", median(replay.ref), median(replay.dokit)),
    ];
    const { latency, cpu, cpuRatio } = tail;
    const tailFigures: StreamsFigure[] = [
      { measure: `live tail to ${readers} WebSocket readers, p50`, unit: "ms", ref: percentile(latency.raw, 0.5), dokit: percentile(latency.dokit, 0.5), ratio: percentile(latency.dokit, 0.5) / percentile(latency.raw, 0.5), vsRaw: true },
      { measure: `live tail to ${readers} WebSocket readers, p99`, unit: "ms", ref: percentile(latency.raw, 0.99), dokit: percentile(latency.dokit, 0.99), ratio: percentile(latency.dokit, 0.99) / percentile(latency.raw, 0.99), vsRaw: true },
    ];
    if (pid !== undefined) {
      tailFigures.push({
        measure: `live tail to ${readers} WebSocket readers, workerd CPU per append (median of ${tailRounds} rounds)`,
        unit: "µs",
        ref: median(cpu.raw),
        dokit: median(cpu.dokit),
        ratio: median(cpuRatio),
        vsRaw: true,
        note: `each round's dokit/raw from ${Math.min(...cpuRatio).toFixed(2)} to ${Math.max(...cpuRatio).toFixed(2)}×; ${perRound} appends per round and object`,
      });
    }
    const text = figureText([...figures, ...tailFigures.map((f) => ({ ...f, measure: `${f.measure} (vs raw)` }))], [["ref", "ref"], ["dokit", "dokit"]]);
    return { figures: [...figures, ...tailFigures], text };
  });
}

await runStandalone(import.meta.url, {
  script: "bench/streams.ts",
  heading: "Streams (one object each; ratio is dokit over the reference)",
  bench: streamsBench,
  result: streamsRun,
});
