// What a Yjs document of N structs costs to load: the heap it adds and the time to apply its
// snapshot, for the document bounds of dokit/yjs (`maxDocumentStructs`, `maxUpdateStructs`). The
// structs are one-character text items each inserted before the last (Yjs cannot merge them), the
// worst case per struct; a typed document merges each run of typing into one struct.
// Runs in Node (the same V8 as workerd), each size in a fresh process so one size's garbage does not
// count for the next:
//   node --expose-gc bench/yjs-structs.ts [--sizes=100000,250000,500000,1000000]
import { execFileSync } from "node:child_process";
import * as Y from "yjs";
import { arg } from "./lib/cli.ts";
import { commandLine, recordRun, type RunResult } from "./lib/results.ts";

const one = process.argv.find((a) => a.startsWith("--one="));
if (one) {
  const n = Number(one.slice("--one=".length));
  const source = new Y.Doc();
  const text = source.getText("body");
  source.transact(() => {
    for (let i = 0; i < n; i++) text.insert(0, "a");
  });
  const snapshot = Y.encodeStateAsUpdate(source);
  source.destroy();
  const gc = (globalThis as { gc?: () => void }).gc as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  const doc = new Y.Doc();
  Y.applyUpdate(doc, snapshot);
  const ms = performance.now() - started;
  gc();
  const after = process.memoryUsage().heapUsed;
  let structs = 0;
  for (const list of doc.store.clients.values()) structs += list.length;
  console.log(JSON.stringify({ structs, snapshotBytes: snapshot.byteLength, heapMB: (after - before) / 2 ** 20, loadMs: ms }));
} else {
  const sizes = arg("sizes", "100000,250000,500000,1000000").split(",").map(Number);
  console.log("structs   snapshot   heap added   load");
  const figures: RunResult["figures"] = [];
  for (const n of sizes) {
    const out = execFileSync(process.execPath, ["--expose-gc", new URL(import.meta.url).pathname, `--one=${n}`], { encoding: "utf8" });
    const r = JSON.parse(out) as { structs: number; snapshotBytes: number; heapMB: number; loadMs: number };
    console.log(`${String(r.structs).padStart(9)} ${(r.snapshotBytes / 2 ** 20).toFixed(1).padStart(7)} MB ${r.heapMB.toFixed(1).padStart(9)} MB ${r.loadMs.toFixed(0).padStart(6)} ms`);
    const mb = (v: number) => Math.round(v * 10) / 10;
    figures.push({ name: `${n.toLocaleString("en-US")} structs`, unit: "–", values: { "snapshot (MB)": mb(r.snapshotBytes / 2 ** 20), "heap added (MB)": mb(r.heapMB), "load (ms)": Math.round(r.loadMs) } });
  }
  const run = { measure: "yjs-structs", title: "Yjs documents by struct count", command: commandLine("node bench/yjs-structs.ts"), quick: false };
  console.log(`result file: ${recordRun({ ...run, columns: ["snapshot (MB)", "heap added (MB)", "load (ms)"], figures }).pathname}`);
}
