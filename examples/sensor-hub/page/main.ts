// The dashboard: an AgentClient that renders the hub's synced summary, and
// simulated sensors that are plain WebSockets speaking the device side.
import { AgentClient } from "dokit/client";
import { ALERT_ABOVE, type Summary } from "../src/api";

const HUB = "greenhouse";
const rows = document.querySelector("#rows") as HTMLTableSectionElement;
const device = document.querySelector("#device") as HTMLDivElement;
const status = document.querySelector("#status") as HTMLSpanElement;
const alerts = document.querySelector("#alerts") as HTMLParagraphElement;

function render(summary: Summary): void {
  alerts.textContent = summary.alerts.length
    ? `Alerts (readings above ${ALERT_ABOVE}): ${summary.alerts.map((a) => `${a.sensorId} ${a.value.toFixed(1)} at ${new Date(a.at).toLocaleTimeString()}`).join("; ")}`
    : `No alerts (a reading above ${ALERT_ABOVE} raises one, through the hub's Queue).`;
  const entries = Object.entries(summary.sensors).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return;
  rows.replaceChildren(
    ...entries.map(([id, s]) => {
      const row = document.createElement("tr");
      row.dataset.sensor = id;
      for (const text of [id, s.last.toFixed(1), s.min.toFixed(1), s.max.toFixed(1), s.mean.toFixed(2), String(s.count), new Date(s.at).toLocaleTimeString()]) {
        row.append(Object.assign(document.createElement("td"), { textContent: text }));
      }
      return row;
    }),
  );
}

const client = new AgentClient<unknown, Summary>({ agent: "SensorHub", name: HUB, onStateUpdate: (summary) => render(summary) });
client.ready.then(() => {
  status.textContent = "connected.";
  document.body.dataset.ready = "true";
});

// ── Simulated devices ──────────────────────────────────────────────────────
const sensors: WebSocket[] = [];
const stop = document.querySelector("#stop") as HTMLButtonElement;
const note = (text: string) => {
  device.textContent = `${text}\n${device.textContent ?? ""}`.split("\n").slice(0, 8).join("\n");
};

function startSensor(): void {
  const id = `sim-${sensors.length + 1}`;
  const url = new URL(`/agents/sensor-hub/${HUB}`, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  url.search = new URLSearchParams({ client: "sensor", sensor: id }).toString();
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  let tick = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const report = () => {
    const value = 20 + 5 * Math.sin(tick / 3 + sensors.indexOf(socket)) + Math.random();
    if (tick++ % 2 === 0) {
      // A callable, as a JSON rpc frame.
      socket.send(JSON.stringify({ type: "rpc", id: crypto.randomUUID(), method: "reportReading", args: [id, value] }));
    } else {
      // The same reading as 8 binary bytes.
      const frame = new DataView(new ArrayBuffer(8));
      frame.setFloat64(0, value, true);
      socket.send(frame.buffer);
    }
  };
  socket.addEventListener("open", () => {
    report();
    timer = setInterval(report, 1000);
  });
  socket.addEventListener("message", (event) => note(`${id} got ${String(event.data)}`));
  socket.addEventListener("close", () => clearInterval(timer));
  sensors.push(socket);
  stop.disabled = false;
}

document.querySelector("#simulate")?.addEventListener("click", startSensor);
stop.addEventListener("click", () => {
  for (const socket of sensors.splice(0)) socket.close();
  stop.disabled = true;
});
