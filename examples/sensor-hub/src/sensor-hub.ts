import { DurableObject, RpcTarget } from "cloudflare:workers";
import { z } from "zod";
import { Callables } from "dokit/callables";
import { getCurrentAgent, Lifecycle, Refusal } from "dokit/lifecycle";
import { State } from "dokit/state";
import { type Connection, WebSockets } from "dokit/websockets";
import type { HubApi, SensorSummary, Summary } from "./api";

const SensorId = z.string().regex(/^[\w-]{1,32}$/);
const param = (request: Request, key: string) => new URL(request.url).searchParams.get(key);
const isSensor = (connection: Connection) => connection.tags.includes("sensor");

/** Both clients call these; only sensors may report. */
export class HubCallables extends RpcTarget implements HubApi {
  readonly #hub: SensorHub;

  constructor(hub: SensorHub) {
    super();
    this.#hub = hub;
  }

  async reportReading(sensorId: string, value: number): Promise<number> {
    const { connection } = getCurrentAgent();
    if (!connection || !isSensor(connection)) throw new Refusal("Only sensors report readings");
    return this.#hub.record(sensorId, value);
  }

  async recent(sensorId: string, limit = 10): Promise<{ value: number; at: number }[]> {
    return this.#hub.recent(sensorId, limit);
  }
}

/**
 * Sensors connect with `?client=sensor&sensor={id}`: no Agents protocol frames
 * (no identity, no state; a device only sees answers to its own calls) and
 * readonly. They report through the `reportReading` callable (JSON `rpc` frames)
 * or, for the smallest devices, as an 8-byte binary frame: one float64, little-endian.
 * Readings go to SQLite; the summary browsers watch is a State derived from it.
 */
export class SensorHub extends DurableObject<Env> {
  readonly summary = new State<Summary>({
    initialState: { sensors: {}, readings: 0 },
    onChanged: (_state, source) => this.webSockets.broadcastState(source),
  });
  readonly callables = new Callables(new HubCallables(this), {
    args: {
      reportReading: { sensorId: SensorId, value: z.number().finite() },
      recent: { sensorId: SensorId, limit: z.number().int().min(1).max(100).optional() },
    },
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.summary,
    callables: this.callables,
    protocol: (_connection, ctx) => param(ctx.request, "client") !== "sensor",
    // Nobody writes the summary with state frames: it is derived on the server.
    readonly: () => true,
    getConnectionTags: (_connection, ctx) => {
      const sensor = param(ctx.request, "sensor");
      return param(ctx.request, "client") === "sensor" && sensor && SensorId.safeParse(sensor).success
        ? ["sensor", `sensor:${sensor}`]
        : ["browser"];
    },
    handlers: {
      onMessage: async (connection, message) => {
        // Binary frame: one float64 reading from the sensor named in the connection's tags.
        const sensorId = connection.tags.find((tag) => tag.startsWith("sensor:"))?.slice("sensor:".length);
        if (!sensorId || !(message instanceof ArrayBuffer) || message.byteLength !== 8) return;
        const value = new DataView(message).getFloat64(0, true);
        if (Number.isFinite(value)) await this.record(sensorId, value);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.summary).use(this.webSockets);

  /** Runs on the first request after a start or wake. Cheap: the table exists after the first time. */
  onStart(): void {
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS readings (sensor_id TEXT NOT NULL, value REAL NOT NULL, at INTEGER NOT NULL)",
    );
  }

  /**
   * Stores a reading and refreshes that sensor's line of the summary.
   * @returns how many readings the sensor has sent
   */
  async record(sensorId: string, value: number): Promise<number> {
    const sql = this.ctx.storage.sql;
    const at = Date.now();
    sql.exec("INSERT INTO readings (sensor_id, value, at) VALUES (?, ?, ?)", sensorId, value, at);
    const row = sql
      .exec<Omit<SensorSummary, "last" | "at">>(
        "SELECT min(value) AS min, max(value) AS max, avg(value) AS mean, count(*) AS count FROM readings WHERE sensor_id = ?",
        sensorId,
      )
      .one();
    const current = this.summary.get();
    const line: SensorSummary = { ...row, mean: Math.round(row.mean * 100) / 100, last: value, at };
    this.summary.set({ sensors: { ...current.sensors, [sensorId]: line }, readings: current.readings + 1 });
    return row.count;
  }

  /** @returns the sensor's latest readings, newest first */
  recent(sensorId: string, limit: number): { value: number; at: number }[] {
    return this.ctx.storage.sql
      .exec<{ value: number; at: number }>(
        "SELECT value, at FROM readings WHERE sensor_id = ? ORDER BY at DESC, rowid DESC LIMIT ?",
        sensorId,
        limit,
      )
      .toArray();
  }
}
