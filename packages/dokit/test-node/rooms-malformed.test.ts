// dokit's RoomMember against a malicious server over real loopback: room frames with fields of the
// wrong type are reported through onFrameError and ignored, the good ones around them still act,
// and a Node process running the member does not end.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it, onTestFinished } from "vitest";
import { WebSocketServer } from "ws";
import { RoomMember } from "../src/client";
import { eventually } from "./helpers";

/** Room frames with a field of the wrong type, each with the problem the member reports. */
const MALFORMED: [frame: unknown, problem: string][] = [
  [{ type: "dokit_room_gap", from: 1, to: { toString: null } }, "to is not a whole number"],
  [{ type: "dokit_room_gap", from: 5, to: 2 }, "from is after to"],
  [{ type: "dokit_room", seq: { toString: null, valueOf: null }, data: "x" }, "seq is not a whole number"],
  [{ type: "dokit_room", seq: 9, from: { toString: null }, data: "x" }, "from is not a string"],
  [{ type: "dokit_room", seq: 9 }, "data is missing"],
  [{ type: "dokit_room_reset", epoch: { toString: null }, seq: 0 }, "epoch is not a string"],
  [{ type: "dokit_room_welcome", room: "r", shard: "0", seq: 0, count: 1 }, "shard is not a whole number"],
  [{ type: "dokit_room_count", count: { valueOf: null } }, "count is not a whole number"],
  [{ type: "dokit_room_ack", id: { toString: null }, seq: 1 }, "id is not a string"],
  [{ type: "dokit_room_ack", id: "x", seq: "1" }, "seq is not a whole number"],
];

const EXPECTED_REPORTS = MALFORMED.map(([frame, problem]) => `${(frame as { type: string }).type}: ${problem}`);

/**
 * A WebSocket server on 127.0.0.1 that greets every client with a welcome, each malformed room frame,
 * then two good messages and a count.
 * @returns its `host:port`
 */
async function maliciousRoom(): Promise<string> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.on("connection", (socket) => {
    socket.send(JSON.stringify({ type: "dokit_room_welcome", room: "r", shard: 0, seq: 0, count: 1, epoch: "e" }));
    for (const [frame] of MALFORMED) socket.send(JSON.stringify(frame));
    socket.send(JSON.stringify({ type: "dokit_room", seq: 1, from: "a", data: "one" }));
    socket.send(JSON.stringify({ type: "dokit_room", seq: 2, data: "two" }));
    socket.send(JSON.stringify({ type: "dokit_room_count", count: 3 }));
  });
  await once(server, "listening");
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("RoomMember against a malicious server", () => {
  it("reports every malformed room frame through onFrameError, ignores it, and acts on the good ones", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener("uncaughtException", onUncaught);
    onTestFinished(() => void process.removeListener("uncaughtException", onUncaught));
    const host = await maliciousRoom();
    const reports: string[] = [];
    const messages: unknown[] = [];
    const member = new RoomMember<string>({
      host,
      basePath: "rooms/r",
      onFrameError: (error) => reports.push(`${error.frameType}: ${error.problem}`),
      onRoomMessage: (message) => messages.push(message),
    });
    onTestFinished(() => member.close());
    await eventually(() => expect(member.count).toBe(3), { timeout: 5000, interval: 20 });
    expect(reports).toEqual(EXPECTED_REPORTS);
    expect(messages).toEqual([{ seq: 1, from: "a", data: "one" }, { seq: 2, data: "two" }]);
    expect({ seq: member.seq, shard: member.shard, epoch: member.epoch }).toEqual({ seq: 2, shard: 0, epoch: "e" });
    expect(uncaught).toEqual([]);
  });

  it("does not end a Node process that runs the member (exit code 0, every frame reported)", async () => {
    const host = await maliciousRoom();
    const dir = await mkdtemp(join(tmpdir(), "dokit-room-member-"));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await build({ entryPoints: [new URL("../src/client/index.ts", import.meta.url).pathname], bundle: true, format: "esm", platform: "neutral", outfile: join(dir, "client.mjs"), logLevel: "silent" });
    await writeFile(
      join(dir, "run.mjs"),
      `import { RoomMember } from "./client.mjs";
      const reports = [];
      const messages = [];
      const member = new RoomMember({ host: process.argv[2], basePath: "rooms/r", onFrameError: (e) => reports.push(e.frameType + ": " + e.problem), onRoomMessage: (m) => messages.push(m.seq) });
      await new Promise((resolve) => { const timer = setInterval(() => member.count === 3 && (clearInterval(timer), resolve()), 10); });
      member.close();
      console.log(JSON.stringify({ reports, messages }));`,
    );
    const child = spawn(process.execPath, [join(dir, "run.mjs"), host], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const [code] = (await once(child, "exit")) as [number | null];
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(stdout)).toEqual({ reports: EXPECTED_REPORTS, messages: [1, 2] });
  });
});
