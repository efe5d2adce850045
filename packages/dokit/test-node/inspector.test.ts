// The Inspector's guard over real loopback sockets: the Host a browser sends
// (also a DNS-rebound page, or a deployed hostname) and the Origin of a page on
// another site. A refused request must look exactly like a path nobody claims.
import { request as httpRequest } from "node:http";
import { describe, expect, inject, it } from "vitest";
import { fresh } from "./helpers";

const base = new URL(inject("workerUrl"));
/** @returns the path of a PlainRoom no other test uses */
const roomPath = (label: string) => `/agents/plain-room/${fresh(`inspect-${label}`)}`;

type Answer = { status: number; body: string; type: string | undefined };

/** GETs `target` from the worker with exactly the given headers (node:http sends the `Host` it is given). */
function get(target: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ hostname: base.hostname, port: base.port, path: target, headers }, (incoming) => {
      let body = "";
      incoming.setEncoding("utf8");
      incoming.on("data", (chunk: string) => (body += chunk));
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, body, type: incoming.headers["content-type"] }));
      incoming.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("Inspector guard over real sockets", () => {
  it("serves the page and the snapshot to a loopback Host", async () => {
    const object = roomPath("local");
    const page = await get(`${object}/__dokit`, { host: base.host });
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    const snapshot = await get(`${object}/__dokit/snapshot`, { host: base.host });
    expect(snapshot.status).toBe(200);
    expect(JSON.parse(snapshot.body)).toMatchObject({ connections: [] });
  });

  it.each([
    ["a deployed hostname", { host: "myapp.example.com" }],
    ["a DNS-rebound page (its own Host and Origin)", { host: "evil.example.com", origin: "http://evil.example.com" }],
    ["a page on another site, on the loopback Host", { origin: "http://evil.example.com" }],
    ["a cross-site navigation, on the loopback Host", { "sec-fetch-site": "cross-site" }],
  ])("answers %s exactly as an unclaimed path", async (_label, headers: Record<string, string>) => {
    const object = roomPath("refused");
    const all = { host: base.host, ...headers };
    for (const route of ["/__dokit", "/__dokit/snapshot"]) {
      const refused = await get(`${object}${route}`, all);
      const unclaimed = await get(`${object}/nothing-here`, all);
      expect(refused.status).toBe(404);
      expect(refused).toEqual(unclaimed);
      expect(refused.body).not.toMatch(/dokit|inspector/i);
    }
  });
});
