// Sessions bench: dokit/sessions beside agents/sessions 0.32.0 (bench/worker-sessions/worker.ts), in
// one workerd, the same messages written to each.
//   rows written per append: a text message, a 2 MB message, a 200 KB image (counted inside the object,
//     the rowsWritten of every SQL statement the append ran; target: dokit at most the reference);
//   reading 10,000 messages with history(), and getRecentHistory(8 MiB): time seen from outside less an
//     empty call's round trip to the same object, median of the rounds;
//   and history()'s peak isolate heap: the live heap sampled over workerd's inspector while it reads
//     (historyPeak), in a worker of its own;
//   search over the 10,000 (the index built by an untimed first search): p50 and p99 of 1,000 queries
//     (with 100, the p99 is the second slowest: one preemption or collection decides it).
// `node bench/sessions.ts [--quick] [--rows-only]` alone, or `pnpm bench --only=sessions`; either writes the
// result file bench/results/sessions.json (lib/results.ts; a --quick run bench/results/quick/sessions.json).
//   --rows-only: the result file keeps only the rows-written figures (exact counts, so valid from a loaded machine).
import type { RunResult } from "./lib/results.ts";
import { figureText, refRun, runStandalone, type VersusRef, withWorker } from "./lib/standalone.ts";
import { openHeapReader } from "./lib/heap.ts";
import { middle, rank } from "./lib/stats.ts";

/** One measure, for both implementations. */
export type SessionsFigure = VersusRef;

/** @returns the sessions measure's result (lib/results.ts): dokit, the reference and dokit over it; `rowsOnly` keeps the row counts */
export function sessionsRun(figures: readonly SessionsFigure[], rowsOnly = false): Omit<RunResult, "command" | "quick"> {
  return refRun("sessions", "Sessions", figures, rowsOnly);
}

const percentile = (values: number[], p: number): number => rank(values, p / 100);

const IMPLS = ["ref", "dokit"] as const;

/**
 * Starts the sessions worker, measures, stops it.
 * @returns the figures and a printable table
 */
export async function sessionsBench(options: { quick?: boolean } = {}): Promise<{ figures: SessionsFigure[]; text: string }> {
  const messages = options.quick ? 2_000 : 10_000;
  const rounds = options.quick ? 3 : 7;
  // A p99 is read from the slowest 1 %: 1,000 queries put ten samples there, so one stall of the
  // machine (a preemption, a collection; both implementations see them equally) no longer sets it.
  const queries = options.quick ? 30 : 1000;
  const config = new URL("./worker-sessions/wrangler.jsonc", import.meta.url);
  const figures = await withWorker(config, async ({ call }) => {
    const timed = async (impl: string, name: string, action: string): Promise<{ ms: number; value: number }> => {
      let t = performance.now();
      const value = await call(`/${impl}/${name}/${action}`);
      const ms = performance.now() - t;
      t = performance.now();
      await call(`/${impl}/${name}/ping`);
      return { ms: ms - (performance.now() - t), value };
    };
    const run = Date.now().toString(36);
    const figures: SessionsFigure[] = [];
    const figure = (measure: string, unit: string, ref: number, dokit: number) => figures.push({ measure, unit, ref, dokit, ratio: dokit / ref, ...(unit === "rows" ? { target: 1 } : {}) });

    // Rows written per append, on an object whose tables exist.
    const rows: Record<string, Record<(typeof IMPLS)[number], number>> = {};
    for (const impl of IMPLS) {
      const name = `rows-${run}`;
      await call(`/${impl}/${name}/rows?kind=text`);
      for (const kind of ["text", "2mb", "image"]) (rows[kind] ??= { ref: 0, dokit: 0 })[impl] = await call(`/${impl}/${name}/rows?kind=${kind}`);
    }
    figure("rows written: a text append", "rows", rows.text!.ref, rows.text!.dokit);
    figure("rows written: a 2 MB message", "rows", rows["2mb"]!.ref, rows["2mb"]!.dokit);
    figure("rows written: a 200 KB image", "rows", rows.image!.ref, rows.image!.dokit);

    // 10,000 messages in each, then reads.
    const name = `read-${run}`;
    for (const impl of IMPLS) for (let done = 0; done < messages; done += 1000) await call(`/${impl}/${name}/fill?n=${Math.min(1000, messages - done)}`);
    const reads: Record<string, Record<string, number[]>> = { history: { ref: [], dokit: [] }, recent: { ref: [], dokit: [] } };
    for (let round = -1; round < rounds; round++) {
      const order = round % 2 ? IMPLS : ([...IMPLS].reverse() as unknown as typeof IMPLS);
      for (const impl of order) {
        for (const action of ["history", "recent"]) {
          const { ms, value } = await timed(impl, name, action);
          if (action === "history" && value !== messages) throw new Error(`${impl} history() read ${value} of ${messages}`);
          if (round >= 0) reads[action]![impl]!.push(ms);
        }
      }
    }
    figure(`history() over ${messages.toLocaleString("en")} messages (median of ${rounds})`, "ms", percentile(reads.history!.ref!, 50), percentile(reads.history!.dokit!, 50));
    figure(`getRecentHistory(8 MiB) of ${messages.toLocaleString("en")} (median of ${rounds})`, "ms", percentile(reads.recent!.ref!, 50), percentile(reads.recent!.dokit!, 50));

    // Search: the first builds the index (untimed).
    // Every query finds messages: a message holds the four words of one class of the worker's WORDS (index mod 3),
    // so each two-word query names two words of one class.
    const words = ["deploy", "deploy cache", "failed region", "latency", "token alarm", "retry branch", "socket", "budget socket"];
    const search: Record<string, number[]> = { ref: [], dokit: [] };
    for (const impl of IMPLS) await call(`/${impl}/${name}/search?q=deploy`);
    for (let i = 0; i < queries; i++) {
      for (const impl of i % 2 ? IMPLS : ([...IMPLS].reverse() as unknown as typeof IMPLS)) {
        const q = encodeURIComponent(words[i % words.length] as string);
        search[impl]!.push((await timed(impl, name, `search?q=${q}`)).ms);
      }
    }
    figure(`search over ${messages.toLocaleString("en")}, p50 of ${queries.toLocaleString("en")}`, "ms", percentile(search.ref!, 50), percentile(search.dokit!, 50));
    figure(`search over ${messages.toLocaleString("en")}, p99 of ${queries.toLocaleString("en")}`, "ms", percentile(search.ref!, 99), percentile(search.dokit!, 99));

    return figures;
  });
  const peakRounds = options.quick ? 1 : 3;
  const peak = await historyPeak(config, messages, peakRounds);
  const ref = middle(peak.ref) / 1024;
  const dokit = middle(peak.dokit) / 1024;
  // Beside history()'s time.
  const at = figures.findIndex((f) => f.measure.startsWith("history()")) + 1;
  figures.splice(at, 0, {
    measure: `history() over ${messages.toLocaleString("en")} messages, peak isolate heap (median of ${peakRounds})`,
    unit: "KB",
    ref,
    dokit,
    ratio: dokit / ref,
    note: `live heap after a full collection every ${PEAK_EVERY} messages, the largest less the heap before the read; ${peak.samples} samples`,
  });
  return { figures, text: figureText(figures, [["ref", "ref"], ["dokit", "dokit"]]) };
}

/** The peak read collects and samples the heap every this many messages. */
const PEAK_EVERY = 100;

/**
 * Peak isolate memory while history() reads `messages` messages, in a worker of its own with
 * workerd's inspector and `--expose-gc` (so the timed figures run without them): the messages
 * appended to an object of each implementation; then per round, the order alternating, the
 * isolate's live heap (V8's and the embedder's, lib/heap.ts) after a full collection, and
 * history() read through with a full collection and a pause every {@link PEAK_EVERY} messages
 * (the worker's `peak` route), during which the heap is read over the inspector again and again;
 * the largest read less the first.
 * @returns per implementation, each round's peak in bytes; and how many reads the last round took
 */
async function historyPeak(config: URL, messages: number, rounds: number): Promise<{ ref: number[]; dokit: number[]; samples: number }> {
  return withWorker(
    config,
    async ({ call, worker }) => {
      const name = `peak-${Date.now().toString(36)}`;
      for (const impl of IMPLS) for (let done = 0; done < messages; done += 1000) await call(`/${impl}/${name}/fill?n=${Math.min(1000, messages - done)}`);
      const heap = await openHeapReader(worker.inspector as URL, worker.direct);
      const peaks = { ref: [] as number[], dokit: [] as number[] };
      let samples = 0;
      try {
        for (let round = -1; round < rounds; round++) {
          for (const impl of round % 2 ? IMPLS : ([...IMPLS].reverse() as unknown as typeof IMPLS)) {
            const before = await heap.afterGc();
            let reading = true;
            let peak = 0;
            samples = 0;
            const sampler = (async () => {
              while (reading) {
                const usage = await heap.usage();
                if (!reading) break;
                peak = Math.max(peak, usage.js + usage.embedder);
                samples++;
              }
            })();
            const count = await call(`/${impl}/${name}/peak?every=${PEAK_EVERY}`).finally(() => (reading = false));
            await sampler;
            if (count !== messages) throw new Error(`${impl} history() read ${count} of ${messages}`);
            if (round >= 0) peaks[impl].push(peak - (before.js + before.embedder));
          }
        }
      } finally {
        heap.close();
      }
      return { ...peaks, samples };
    },
    { inspector: true, v8Flags: "--expose-gc" },
  );
}

await runStandalone(import.meta.url, {
  script: "bench/sessions.ts",
  heading: "Sessions (one object each; lower is better; ratio is dokit over agents/sessions 0.32.0)",
  bench: sessionsBench,
  result: sessionsRun,
});
