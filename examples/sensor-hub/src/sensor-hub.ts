import { DurableObject, RpcTarget } from "cloudflare:workers";
import { z } from "zod";
import { Callables } from "dokit/callables";
import { Inspector } from "dokit/inspector";
import { getCurrentAgent, Lifecycle, Refusal } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { Queue } from "dokit/queue";
import { Scheduler } from "dokit/schedule";
import { State } from "dokit/state";
import { type Connection, WebSockets } from "dokit/websockets";
import { ALERT_ABOVE, type Alert, type HubApi, type MinuteRollup, type SensorSummary, type Summary } from "./api";
/** How many recent alerts the summary keeps. */
const ALERTS_SHOWN = 5;
const MINUTE = 60_000;

const SensorId = z.string().regex(/^[\w-]{1,32}$/);
const param = (request: Request, key: string) => new URL(request.url).searchParams.get(key);
// tags[0] is the connection id, which the client chooses (`_pk=sensor`): the tags this hub gave are after it.
const isSensor = (connection: Connection) => connection.tags.indexOf("sensor", 1) > 0;

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

  async history(sensorId: string, minutes = 60): Promise<MinuteRollup[]> {
    return this.#hub.history(sensorId, minutes);
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
    initialState: { sensors: {}, readings: 0, alerts: [] },
  });
  readonly callables = new Callables(new HubCallables(this), {
    args: {
      reportReading: { sensorId: SensorId, value: z.number().finite() },
      recent: { sensorId: SensorId, limit: z.number().int().min(1).max(100).optional() },
      history: { sensorId: SensorId, minutes: z.number().int().min(1).max(1440).optional() },
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
        const sensorId = connection.tags.find((tag, index) => index > 0 && tag.startsWith("sensor:"))?.slice("sensor:".length);
        if (!sensorId || !(message instanceof ArrayBuffer) || message.byteLength !== 8) return;
        const value = new DataView(message).getFloat64(0, true);
        if (Number.isFinite(value)) await this.record(sensorId, value);
      },
    },
  });
  /** Every minute, the finished minutes' readings are rolled up per sensor (a schedule in SQLite: it survives restarts). */
  readonly scheduler = new Scheduler({ callbacks: { rollup: () => this.rollUp() } });
  /**
   * Alerts run after the reading that raised them was answered, one at a time,
   * retried with backoff if they throw. A real hub would call a webhook or a
   * pager here; this one lists the alert in the summary browsers watch.
   */
  readonly queue = new Queue({ callbacks: { alert: (alert: Alert) => this.#raise(alert) } });
  readonly lifecycle = Lifecycle.install(this).use(this.summary).use(this.webSockets).use(this.scheduler).use(this.queue)
    // The live inspector at /agents/sensor-hub/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, state: this.summary, scheduler: this.scheduler, queue: this.queue }));

  /** Runs on the first request after a start or wake. Cheap: the tables exist and the interval is stored after the first time. */
  async onStart(): Promise<void> {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS readings (sensor_id TEXT NOT NULL, value REAL NOT NULL, at INTEGER NOT NULL)");
    sql.exec(
      "CREATE TABLE IF NOT EXISTS minutes (sensor_id TEXT NOT NULL, minute INTEGER NOT NULL, count INTEGER NOT NULL, min REAL NOT NULL, max REAL NOT NULL, mean REAL NOT NULL, PRIMARY KEY (sensor_id, minute))",
    );
    // The same id every start: the stored interval is kept (and stays on its grid), never duplicated.
    await this.scheduler.every(60, "rollup", undefined, { id: "rollup" });
  }

  /**
   * Rolls every finished minute since the last rollup into `minutes`, one row per
   * sensor and minute. Idempotent: a run repeated after a crash rewrites the same rows.
   */
  rollUp(now = Date.now()): void {
    const sql = this.ctx.storage.sql;
    const last = sql.exec<{ last: number | null }>("SELECT max(minute) AS last FROM minutes").one().last;
    // From the minute after the last one rolled up, to the start of the current (unfinished) minute.
    const from = last === null ? 0 : last + MINUTE;
    const to = now - (now % MINUTE);
    sql.exec(
      `INSERT OR REPLACE INTO minutes (sensor_id, minute, count, min, max, mean)
       SELECT sensor_id, at - at % ?1 AS minute, count(*), min(value), max(value), avg(value) FROM readings
       WHERE at >= ?2 AND at < ?3 GROUP BY sensor_id, minute`,
      MINUTE,
      from,
      to,
    );
  }

  /** @returns the sensor's per-minute rollups, newest first */
  history(sensorId: string, minutes: number): MinuteRollup[] {
    return this.ctx.storage.sql
      .exec<MinuteRollup>("SELECT minute, count, min, max, mean FROM minutes WHERE sensor_id = ? ORDER BY minute DESC LIMIT ?", sensorId, minutes)
      .toArray();
  }

  #raise(alert: Alert): void {
    const current = this.summary.get();
    this.summary.set({ ...current, alerts: [alert, ...current.alerts].slice(0, ALERTS_SHOWN) });
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
    this.summary.set({ ...current, sensors: { ...current.sensors, [sensorId]: line }, readings: current.readings + 1 });
    // The sensor gets its answer now; the alert runs after, on the Queue.
    if (value > ALERT_ABOVE) await this.queue.push("alert", { sensorId, value, at });
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
