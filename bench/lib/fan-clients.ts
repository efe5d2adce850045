// One client process of the scale bench (bench/rooms-scale.ts forks several, each under its own
// open-file limit, so no process holds more sockets than it may): opens the sockets it is given,
// then timestamps every tagged frame on receipt with the machine's monotonic clock, which all the
// processes share (process.hrtime: CLOCK_MONOTONIC), and reports per publish once each of its
// sockets has it.
import { WebSocket } from "ws";

/** @returns the machine's monotonic clock, in ms: the same clock in every process */
export const clock = (): number => Number(process.hrtime.bigint()) / 1e6;

/** What the driver sends a client process. */
export type ToClients =
  | { op: "open"; population: string; sockets: { url: string; local?: string }[]; ready: string; parallel: number }
  | { op: "close"; population: string };

/** What a client process answers. */
export type FromClients =
  | { op: "opened"; population: string; count: number; failed: number; rssBefore: number; rssAfter: number }
  | { op: "got"; population: string; tag: number; times: Float64Array }
  | { op: "lost"; population: string; count: number }
  | { op: "closed"; population: string };

/** The tag of a frame: the number after `"p":`, or -1. The data puts it first, so the search stops early. */
const TAG = Buffer.from('"p":');
function tagOf(data: Buffer): number {
  const at = data.indexOf(TAG);
  if (at < 0 || at > 120) return -1;
  let n = 0;
  let i = at + TAG.length;
  for (let c = data[i]!; c >= 48 && c <= 57; c = data[++i]!) n = n * 10 + c - 48;
  return i === at + TAG.length ? -1 : n;
}

class Population {
  readonly sockets: WebSocket[] = [];
  /** tag → receipt times, one per socket, and how many have it. */
  readonly seen = new Map<number, { times: Float64Array; n: number }>();
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }

  receive(tag: number): void {
    const now = clock();
    let entry = this.seen.get(tag);
    if (!entry) this.seen.set(tag, (entry = { times: new Float64Array(this.sockets.length), n: 0 }));
    entry.times[entry.n++] = now;
    if (entry.n === this.sockets.length) {
      this.seen.delete(tag);
      send({ op: "got", population: this.name, tag, times: entry.times });
    }
  }
}

const populations = new Map<string, Population>();
const send = (message: FromClients) => process.send?.(message);

/** Opens one socket; resolves once a frame containing `ready` arrived (`""`: any frame). */
function open(population: Population, url: string, local: string | undefined, ready: string): Promise<WebSocket | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true, ...(local && { localAddress: local }) });
    const timer = setTimeout(() => (ws.terminate(), resolve(undefined)), 60_000);
    let ok = false;
    ws.on("message", (data: Buffer) => {
      if (ok) {
        const tag = tagOf(data);
        if (tag >= 0) population.receive(tag);
        return;
      }
      if (ready === "" || data.includes(ready)) {
        ok = true;
        clearTimeout(timer);
        resolve(ws);
      }
    });
    ws.on("close", () => {
      if (ok && !closing.has(population.name)) send({ op: "lost", population: population.name, count: 1 });
      if (!ok) (clearTimeout(timer), resolve(undefined));
    });
    ws.on("error", () => {}); // a close follows
  });
}

const closing = new Set<string>();

process.on("message", async (message: ToClients) => {
  if (message.op === "open") {
    const population = new Population(message.population);
    populations.set(message.population, population);
    const rssBefore = process.memoryUsage().rss;
    let next = 0;
    let failed = 0;
    const lane = async () => {
      while (next < message.sockets.length) {
        const { url, local } = message.sockets[next++]!;
        const ws = await open(population, url, local, message.ready);
        if (ws) population.sockets.push(ws);
        else failed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(message.parallel, message.sockets.length) }, lane));
    send({ op: "opened", population: message.population, count: population.sockets.length, failed, rssBefore, rssAfter: process.memoryUsage().rss });
  } else if (message.op === "close") {
    const population = populations.get(message.population);
    closing.add(message.population);
    if (population) {
      await Promise.all(
        population.sockets.map(
          (ws) =>
            new Promise<void>((resolve) => {
              if (ws.readyState === WebSocket.CLOSED) return resolve();
              const timer = setTimeout(() => (ws.terminate(), resolve()), 3_000);
              ws.once("close", () => (clearTimeout(timer), resolve()));
              ws.close(1000, "bench done");
            }),
        ),
      );
    }
    populations.delete(message.population);
    send({ op: "closed", population: message.population });
  }
});
process.on("disconnect", () => process.exit(0));
