// Observability bench: what dokit/observability costs on two paths that events are published
// on, rpc round trip and broadcast fan-out to 200, for three rooms of the same
// worker, interleaved block by block:
//   dokit       the dokit room as in every other measure (Observability not installed)
//   installed   the same room with `.use(new Observability())` and no subscriber
//   subscribed  that room while one subscriber listens on every agents:* channel (it counts
//               the events; a real one that logs or exports spans costs what it does on top)
// The subscriber is per isolate, so it is switched on ("s:1") right before each block of the
// subscribed room and off ("s:0") right after it. `dokit` against earlier runs (bench/median.ts)
// is the zero-subscriber check; `installed` / `dokit` and `subscribed` / `dokit` are printed here.
import { type Client, closeAll, connect, connectMany, fanOut, roomUrl, roundTrip } from "./lib/client.ts";
import { roundOrder } from "./lib/order.ts";
import { median, quantile } from "./lib/stats.ts";

const VARIANTS = ["dokit", "installed", "subscribed"] as const;
type Variant = (typeof VARIANTS)[number];
/** The bench worker's room path of each variant. */
const ROOM: Record<Variant, string> = { dokit: "dokit", installed: "observed", subscribed: "observed" };

/** One figure of this group. */
export interface ObservabilityFigure {
  measure: string;
  stat: string;
  values: Record<Variant, number>;
}

/** Events the subscriber counted, as the room last reported (proves it listened). */
let received = 0;

/** Switches the isolate's subscriber through `client` and waits for the room's answer (`s=<events counted>`). */
async function setSubscriber(client: Client, on: boolean): Promise<void> {
  await roundTrip(client, on ? "s:1" : "s:0", (d) => d.startsWith("s=") && Boolean((received = Number(d.slice(2))) >= 0));
}

/** The variants' order in each round (lib/order.ts): every variant in every position, and after every other one, equally often. */
const orderOf = roundOrder(VARIANTS);

/** Runs `body` for each variant, `rounds` times, in the round's order; the subscriber is on only around `subscribed`. */
async function interleave(rounds: number, control: Client, body: (variant: Variant, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (const variant of orderOf(round)) {
      if (variant === "subscribed") await setSubscriber(control, true);
      try {
        await body(variant, round);
      } finally {
        if (variant === "subscribed") await setSubscriber(control, false);
      }
    }
  }
}

const byVariant = <T>(make: () => T): Record<Variant, T> => ({ dokit: make(), installed: make(), subscribed: make() });

/**
 * Measures rpc round trip (p50, p99) and fan-out to 200 (median) for the three variants.
 * @param base - the bench worker's address
 * @param scale - shrinks counts for --quick
 */
export async function observabilityBench(base: URL, run: string, scale: (n: number) => number): Promise<{ figures: ObservabilityFigure[]; text: string }> {
  const figures: ObservabilityFigure[] = [];
  const control = await connect(roomUrl(base, "observed", `obs-control-${run}`));
  try {
    // rpc round trip: one connection per variant, blocks of 10 sequential calls.
    const rpcClients = {} as Record<Variant, Client>;
    for (const variant of VARIANTS) rpcClients[variant] = await connect(roomUrl(base, ROOM[variant], `obs-rpc-${variant}-${run}`));
    const samples = byVariant<number[]>(() => []);
    let n = 0;
    const block = async (variant: Variant, keep: boolean) => {
      for (let i = 0; i < 10; i++, n++) {
        const ms = await roundTrip(rpcClients[variant], `{"type":"rpc","id":"${n}","method":"echo","args":[${n}]}`, (d) => d.includes(`"id":"${n}"`));
        if (keep) samples[variant].push(ms);
      }
    };
    await interleave(10, control, (variant) => block(variant, false));
    await interleave(Math.ceil(scale(2_040) / 10), control, (variant) => block(variant, true));
    await closeAll(Object.values(rpcClients));
    figures.push({ measure: "rpc round trip", stat: "p50", values: map((v) => quantile(samples[v], 0.5)) });
    figures.push({ measure: "rpc round trip", stat: "p99", values: map((v) => quantile(samples[v], 0.99)) });

    // broadcast fan-out to 200: one room of 200 per variant.
    const rooms = {} as Record<Variant, Client[]>;
    for (const variant of VARIANTS) rooms[variant] = await connectMany((i) => roomUrl(base, ROOM[variant], `obs-fan-${variant}-${run}`, `c${i}`), 200);
    const fan = byVariant<number[]>(() => []);
    const once = (variant: Variant, tag: string) => {
      const clients = rooms[variant];
      const message = `b:${variant}${tag}`;
      return fanOut(clients, () => clients[0]?.ws.send(message), (d) => d === message);
    };
    await interleave(2, control, async (variant, r) => void (await once(variant, `warm${r}`)));
    await interleave(scale(30), control, async (variant, r) => void fan[variant].push(await once(variant, `${r}`)));
    for (const variant of VARIANTS) await closeAll(rooms[variant]);
    figures.push({ measure: "broadcast fan-out to 200", stat: "median", values: map((v) => median(fan[v])) });
  } finally {
    await closeAll([control]);
  }
  return { figures, text: `${format(figures)}\n\nThe subscriber received ${received} events.` };
}

const map = (f: (variant: Variant) => number) => ({ dokit: f("dokit"), installed: f("installed"), subscribed: f("subscribed") });

function format(figures: ObservabilityFigure[]): string {
  const rows = figures.map((f) => {
    const { dokit, installed, subscribed } = f.values;
    return `| ${f.measure} | ${f.stat} | ${dokit.toFixed(3)} | ${installed.toFixed(3)} | ${subscribed.toFixed(3)} | ${(installed / dokit).toFixed(3)}× | ${(subscribed / dokit).toFixed(3)}× |`;
  });
  return ["| measure | stat | dokit (ms) | installed, no subscriber (ms) | one subscriber (ms) | installed / dokit | subscribed / dokit |", "| --- | --- | --- | --- | --- | --- | --- |", ...rows].join("\n");
}
