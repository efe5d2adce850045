import { env, exports } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { connectionAttachment, hibernate, openSocket, type TestSocket } from "dokit/testing";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { fresh } from "../../test-helpers";
import type { MinuteRollup, Summary } from "../src/api";

// The Worker's own fetch (typed by GlobalProps in env.d.ts): requests go through its routing.
const worker = exports.default;
const hubUrl = (name: string) => `http://example.com/agents/sensor-hub/${name}`;
type StateFrame = { type: "cf_agent_state"; state: Summary };

const sensor = (name: string, id: string) => openSocket(worker, hubUrl(name), { query: { client: "sensor", sensor: id } });

async function browser(name: string): Promise<{ socket: TestSocket; summary: Summary }> {
  const socket = await openSocket(worker, hubUrl(name));
  expect(await socket.nextJSON()).toEqual({ type: "cf_agent_identity", name, agent: "sensor-hub", stateFollows: true });
  return { socket, summary: (await socket.nextJSON<StateFrame>()).state };
}

const float64 = (value: number) => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value, true);
  return view.buffer;
};

describe("sensor hub", () => {
  it("sends sensors no protocol frames, and browsers the summary", async () => {
    const name = fresh("quiet");
    const device = await sensor(name, "s1");
    expect(await device.drain()).toEqual([]);
    const { socket, summary } = await browser(name);
    expect(summary).toEqual({ sensors: {}, readings: 0, alerts: [] });
    await Promise.all([device.close(), socket.close()]);
  });

  it("stores readings from callables and binary frames in SQLite, and browsers watch the summary live", async () => {
    const name = fresh("live");
    const watcher = await browser(name);
    const device = await sensor(name, "s1");

    expect(await device.rpc("reportReading", ["s1", 20])).toBe(1);
    expect((await watcher.socket.nextJSON<StateFrame>()).state.sensors.s1).toMatchObject({ last: 20, count: 1 });
    device.send(float64(24));
    const { state } = await watcher.socket.nextJSON<StateFrame>();
    expect(state).toMatchObject({ readings: 2, sensors: { s1: { last: 24, min: 20, max: 24, mean: 22, count: 2 } } });
    // The device saw only the answer to its own call: no state broadcasts.
    expect(await device.drain()).toEqual([]);

    expect((await watcher.socket.rpc("recent", ["s1"])) as { value: number }[]).toMatchObject([{ value: 24 }, { value: 20 }]);
    const stub = env.SensorHub.get(env.SensorHub.idFromName(name));
    const stored = await runInDurableObject(stub, (_hub, state) => state.storage.sql.exec("SELECT count(*) AS n FROM readings").one().n);
    expect(stored).toBe(2);
    await Promise.all([device.close(), watcher.socket.close()]);
  });

  it("checks readings and who sends them", async () => {
    // A Refusal is answered with its message and logged as one info line (no error, no stack).
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    onTestFinished(() => {
      error.mockRestore();
      info.mockRestore();
    });
    const name = fresh("checks");
    const watcher = await browser(name);
    const device = await sensor(name, "s1");
    await expect(device.rpc("reportReading", ["s1", "hot"])).rejects.toThrow(/^Invalid argument value of reportReading/);
    await expect(device.rpc("reportReading", ["no spaces allowed", 1])).rejects.toThrow(/^Invalid argument sensorId/);
    await expect(watcher.socket.rpc("reportReading", ["s1", 1])).rejects.toThrow("Only sensors report readings");
    expect(info).toHaveBeenCalledExactlyOnceWith("dokit: callable reportReading refused: Only sensors report readings");
    expect(error).not.toHaveBeenCalled();
    watcher.socket.send({ type: "cf_agent_state", state: { sensors: {}, readings: 0 } });
    expect(await watcher.socket.nextJSON()).toEqual({ type: "cf_agent_state_error", error: "Connection is readonly" });
    expect(await watcher.socket.nextJSON()).toMatchObject({ type: "cf_agent_state", state: { readings: 0 } });
    device.send(new ArrayBuffer(3)); // not a reading: ignored
    expect(await watcher.socket.drain()).toEqual([]);
    await Promise.all([device.close(), watcher.socket.close()]);
  });

  it("does not take a browser whose connection id looks like a sensor tag (_pk=sensor, _pk=sensor:s9) for a sensor", async () => {
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    onTestFinished(() => info.mockRestore());
    const name = fresh("spoof");
    for (const id of ["sensor", "sensor:s9"]) {
      const socket = await openSocket(worker, hubUrl(name), { query: { _pk: id } });
      expect(await socket.nextJSON()).toMatchObject({ type: "cf_agent_identity" });
      await socket.nextJSON(); // the state frame: a browser's
      await expect(socket.rpc("reportReading", ["s9", 1])).rejects.toThrow("Only sensors report readings");
      socket.send(float64(99));
      expect(await socket.drain()).toEqual([]);
      await socket.close();
    }
    const { socket, summary } = await browser(name);
    expect(summary).toEqual({ sensors: {}, readings: 0, alerts: [] });
    await socket.close();
  });

  it("keeps a sensor protocol-free and readonly across hibernation", async () => {
    const name = fresh("wake");
    const watcher = await browser(name);
    const device = await sensor(name, "s9");
    await device.rpc("reportReading", ["s9", 1]);
    await watcher.socket.nextJSON();

    const stub = env.SensorHub.get(env.SensorHub.idFromName(name));
    await hibernate(stub);
    device.send(float64(3));
    expect((await watcher.socket.nextJSON<StateFrame>()).state.sensors.s9).toMatchObject({ last: 3, count: 2, mean: 2 });
    expect(await device.drain()).toEqual([]);
    const flags = await runInDurableObject(stub, (hub) => {
      const ws = [...hub.webSockets.getConnections("sensor")][0];
      return ws && (connectionAttachment(ws) as { __dokit: { readonly: boolean; protocol: boolean } }).__dokit;
    });
    expect(flags).toMatchObject({ readonly: true, protocol: false });
    await Promise.all([device.close(), watcher.socket.close()]);
  });

  it("raises an alert on the Queue after answering the sensor, and lists it for browsers", async () => {
    const name = fresh("alert");
    const watcher = await browser(name);
    const device = await sensor(name, "s2");
    expect(await device.rpc("reportReading", ["s2", 99])).toBe(1);
    // First the reading (the sensor had its answer), then the alert, from the Queue's own turn.
    expect((await watcher.socket.nextJSON<StateFrame>()).state).toMatchObject({ readings: 1, alerts: [] });
    const { state } = await watcher.socket.nextJSON<StateFrame>();
    expect(state.alerts).toEqual([{ sensorId: "s2", value: 99, at: expect.any(Number) }]);
    expect(await device.rpc("reportReading", ["s2", 21])).toBe(2);
    expect((await watcher.socket.nextJSON<StateFrame>()).state.alerts).toHaveLength(1);
    const stub = env.SensorHub.get(env.SensorHub.idFromName(name));
    expect(await runInDurableObject(stub, (hub) => hub.queue.list())).toEqual([]);
    await Promise.all([device.close(), watcher.socket.close()]);
  });

  it("rolls readings up per minute on one stored interval that a wake keeps, never duplicates", async () => {
    const name = fresh("rollup");
    const watcher = await browser(name);
    const stub = env.SensorHub.get(env.SensorHub.idFromName(name));
    const minute = 60_000;
    const start = Math.floor(Date.now() / minute) * minute - 3 * minute;
    await runInDurableObject(stub, (_hub, state) => {
      const insert = (sensor: string, value: number, at: number) =>
        state.storage.sql.exec("INSERT INTO readings (sensor_id, value, at) VALUES (?, ?, ?)", sensor, value, at);
      insert("s1", 10, start + 1_000);
      insert("s1", 20, start + 59_000);
      insert("s1", 30, start + minute);
      insert("s2", 5, start + minute + 1);
      insert("s1", 99, Date.now()); // the current minute: not finished, not rolled up yet
    });
    const interval = await runInDurableObject(stub, (hub) => hub.scheduler.list());
    expect(interval).toMatchObject([{ id: "rollup", callback: "rollup", type: "interval", intervalSeconds: 60 }]);

    await runInDurableObject(stub, (hub) => hub.rollUp());
    expect((await watcher.socket.rpc("history", ["s1"])) as MinuteRollup[]).toEqual([
      { minute: start + minute, count: 1, min: 30, max: 30, mean: 30 },
      { minute: start, count: 2, min: 10, max: 20, mean: 15 },
    ]);
    expect((await watcher.socket.rpc("history", ["s2"])) as MinuteRollup[]).toEqual([{ minute: start + minute, count: 1, min: 5, max: 5, mean: 5 }]);
    // Run again (as after a crash mid-run): the same rows, nothing added.
    await runInDurableObject(stub, (hub) => hub.rollUp());
    const rows = await runInDurableObject(stub, (_hub, state) => state.storage.sql.exec("SELECT count(*) AS n FROM minutes").one().n);
    expect(rows).toBe(3);

    await watcher.socket.close();
    await evictDurableObject(stub);
    const after = await browser(name);
    expect(await runInDurableObject(stub, (hub) => hub.scheduler.list())).toEqual(interval);
    await after.socket.close();
  });
});
