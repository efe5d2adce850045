// Two clients of one object: a dokit AgentClient and the old raw WebSocket.
import { AgentClient, type AgentStub } from "dokit/client";
import type { CountMessage, CounterApi } from "../src/api";

const output = document.querySelector("#count") as HTMLOutputElement;
const log = document.querySelector("#log") as HTMLUListElement;
const note = (text: string) => log.prepend(Object.assign(document.createElement("li"), { textContent: text }));

const client = new AgentClient({ agent: "Counter", name: "demo" });
const counter = client.stub as AgentStub<CounterApi>;
client.addEventListener("message", (event) => {
  const data = (event as MessageEvent).data;
  if (typeof data !== "string" || !data.startsWith("{")) return;
  const message = JSON.parse(data) as CountMessage;
  if (message.type !== "count") return;
  output.value = String(message.count);
  note(`dokit client saw ${message.count} (incremented by a ${message.by} client)`);
});
client.ready.then(async () => {
  output.value = String(await counter.count());
  document.body.dataset.ready = "true";
});
document.querySelector("#dokit")?.addEventListener("click", () => void counter.increment());

// The object's own protocol, unchanged: relative to this page, /counter/demo/socket.
const legacyUrl = new URL("counter/demo/socket", location.href);
legacyUrl.protocol = location.protocol === "https:" ? "wss:" : "ws:";
const legacy = new WebSocket(legacyUrl);
legacy.addEventListener("message", (event) => note(`old socket saw ${String(event.data)}`));
document.querySelector("#legacy")?.addEventListener("click", () => legacy.send("increment"));
