// The build log page: starts builds and reads the newest one's log over the dokit client. The
// lines read so far and the cursor are kept in sessionStorage, so a reload shows them at once
// and reads on from the cursor: no line twice, none missed.
import { AgentClient } from "dokit/client";
import type { LogLine } from "../src/api";

const log = document.querySelector("#log") as HTMLPreElement;
const status = document.querySelector("#status") as HTMLSpanElement;
const objectPath = new URL("/agents/build-log/demo/", location.origin);
const client = new AgentClient({ agent: "BuildLog", name: "demo" });
void client.ready.then(() => (document.body.dataset.ready = "true"));

type Kept = { id: string; lines: string[] };
const kept = (): Kept | undefined => JSON.parse(sessionStorage.getItem("build-log") ?? "null") ?? undefined;
const keep = (value: Kept) => sessionStorage.setItem("build-log", JSON.stringify(value));

let reading: AbortController | undefined;

async function follow(id: string): Promise<void> {
  reading?.abort();
  const controller = (reading = new AbortController());
  const saved = kept();
  const lines = saved?.id === id ? saved.lines : [];
  log.textContent = lines.map((line) => `${line}\n`).join("");
  status.textContent = `build ${id}: reading from line ${lines.length + 1}`;
  const reader = client.streams.read<LogLine>(id, { from: lines.length, signal: controller.signal });
  try {
    for await (const { chunk } of reader) {
      lines.push(chunk.text);
      keep({ id, lines });
      log.textContent += `${chunk.text}\n`;
    }
    status.textContent = `build ${id}: ${reader.state}`;
    document.body.dataset.done = id;
  } catch (error) {
    if (!controller.signal.aborted) status.textContent = `build ${id}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

document.querySelector("#start")?.addEventListener("click", async () => {
  const response = await fetch(new URL("start", objectPath), { method: "POST" });
  const { id } = (await response.json()) as { id: string };
  void follow(id);
});

// On load: the build this tab was reading, else the newest one.
const saved = kept();
if (saved) void follow(saved.id);
else
  void fetch(new URL("latest", objectPath))
    .then((response) => response.json() as Promise<{ streamId: string } | null>)
    .then((latest) => latest && follow(latest.streamId));
