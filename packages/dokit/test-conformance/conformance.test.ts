// The official MCP conformance suite (`@modelcontextprotocol/conformance`,
// its 2025-era client) against McpHandler with default options, over real
// loopback sockets. The CLI runs once for the whole suite; each scenario is
// one test, so a failure names the scenario and shows its failing checks.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** Every server scenario of the suite (`conformance list --server`), pending ones included. */
const SCENARIOS = [
  "server-initialize",
  "logging-set-level",
  "ping",
  "completion-complete",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-error",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "json-schema-2020-12",
  "elicitation-sep1034-defaults",
  "server-sse-polling",
  "server-sse-multiple-streams",
  "elicitation-sep1330-enums",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
  "dns-rebinding-protection",
] as const;

/**
 * Warnings that are the suite's own defect, not the server's: scenario → check id → why.
 * Every other warning fails its scenario.
 */
const KNOWN_SUITE_WARNINGS: Record<string, Record<string, string>> = {
  "server-sse-polling": {
    // The suite (0.1.16) declares `mcp-protocol-version: 2025-03-26` on its probe, a version
    // whose clients cannot parse an empty `data:` event, so the SDK transport rightly sends
    // no priming event (nor offers closeSSE) for it. sse-polling.test.ts checks priming,
    // the mid-call close and the resume with the version the session negotiated.
    "server-sse-priming-event": "the probe declares a protocol version that predates priming events",
  },
};

type Check = { id: string; name: string; status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string; errorMessage?: string };

const require = createRequire(import.meta.url);
const packageJson = require.resolve("@modelcontextprotocol/conformance/package.json");
// SAFETY: the package's manifest names its CLI in `bin.conformance`.
const cli = join(dirname(packageJson), (require(packageJson) as { bin: { conformance: string } }).bin.conformance);

let outputDir = "";
let cliOutput = "";
const results = new Map<string, Check[]>();

/** Runs the CLI to completion. @returns its combined output (it exits non-zero when any scenario fails) */
function runSuite(url: string, output: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, "server", "--url", url, "--suite", "all", "--output-dir", output],
      { cwd: output, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve(`${stdout}${stderr}${error && !("code" in error && typeof error.code === "number") ? `\n${error.message}` : ""}`),
    );
  });
}

/** @returns the scenario a result directory (`server-<scenario>-<timestamp>`) belongs to */
const scenarioOf = (dir: string) => dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");

beforeAll(async () => {
  outputDir = await mkdtemp(join(tmpdir(), "dokit-conformance-"));
  const url = new URL(`agents/everything/conformance-${Date.now()}/mcp`, inject("conformanceUrl")).href;
  cliOutput = await runSuite(url, outputDir);
  for (const dir of await readdir(outputDir)) {
    // SAFETY: checks.json is the suite's array of check results.
    results.set(scenarioOf(dir), JSON.parse(await readFile(join(outputDir, dir, "checks.json"), "utf8")) as Check[]);
  }
}, 200_000);

afterAll(async () => {
  if (outputDir) await rm(outputDir, { recursive: true, force: true });
});

describe("MCP conformance suite (2025-era client, default McpHandler options)", () => {
  it("ran every server scenario the suite has, and no other", () => {
    expect([...results.keys()].sort(), `conformance CLI output:\n${cliOutput.slice(-4000)}`).toEqual([...SCENARIOS].sort());
  });

  it.each(SCENARIOS)("%s", (scenario) => {
    const checks = results.get(scenario);
    expect(checks, `no results for ${scenario}`).toBeDefined();
    const known = KNOWN_SUITE_WARNINGS[scenario] ?? {};
    const problems = (checks ?? [])
      .filter((check) => check.status === "FAILURE" || (check.status === "WARNING" && !(check.id in known)))
      .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? check.name}`);
    expect(problems).toEqual([]);
    expect(checks?.some((check) => check.status === "SUCCESS"), "at least one check succeeded").toBe(true);
  });
});
