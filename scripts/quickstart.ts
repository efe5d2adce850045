// `pnpm test:quickstart`: the README's quick start, run the way a newcomer
// runs it. Packs dokit (`pnpm pack`, as scripts/pack.sh does), saves every
// README code block marked `<!-- quick-start: <path> -->` into an empty
// temporary folder, installs the tarball plus wrangler, typescript and
// @cloudflare/workers-types at the versions this workspace uses (from pnpm's
// store when it has them), typechecks with tsc, starts `wrangler dev` on a free
// loopback port and runs the README's client.ts against it twice. Prints
// PASS or FAIL; on failure (or with QUICKSTART_KEEP=1) the folder is kept for a look.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const repo = join(import.meta.dirname, "..");
const started = Date.now();
const dir = mkdtempSync(join(tmpdir(), "dokit-quickstart-"));
const project = join(dir, "counter"); // the newcomer's empty folder
let worker: ChildProcess | undefined;

function step(message: string): void {
  console.log(`quickstart: ${message} (${((Date.now() - started) / 1000).toFixed(1)}s)`);
}

/**
 * Runs a command to completion; throws with its output when it fails or outlives `timeoutMs`.
 * @returns what it printed to stdout
 */
function run(command: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk) => ((stdout += chunk), (output += chunk)));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`\`${command} ${args.join(" ")}\` failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** The README's quick-start files: each fenced block right after `<!-- quick-start: <path> -->`. */
function quickStartFiles(): Map<string, string> {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  const files = new Map<string, string>();
  for (const match of readme.matchAll(/<!-- quick-start: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)) {
    const [, path, body] = match as unknown as [string, string, string];
    const firstLine = body.split("\n", 1)[0] ?? "";
    // A block whose first line is a comment names its own file: keep the two in step.
    if (firstLine.startsWith("//")) check(firstLine.startsWith(`// ${path}`), `README: the block marked ${path} starts with "${firstLine}"`);
    check(!files.has(path), `README: two blocks are marked ${path}`);
    files.set(path, body);
  }
  for (const path of ["src/index.ts", "package.json", "wrangler.jsonc", "env.d.ts", "tsconfig.json", "client.ts"]) {
    check(files.has(path), `README: no code block marked <!-- quick-start: ${path} -->`);
  }
  return files;
}

function workspaceVersion(name: string): string {
  return JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8")).version;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts `wrangler dev` on `port` and resolves once the worker answers HTTP. */
async function startWorker(port: number): Promise<void> {
  let output = "";
  let exited = false;
  // detached: its own process group, so teardown stops wrangler and workerd together.
  worker = spawn("pnpm", ["exec", "wrangler", "dev", "--ip", "127.0.0.1", "--port", String(port)], {
    cwd: project,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  worker.stdout?.on("data", (chunk) => (output += chunk));
  worker.stderr?.on("data", (chunk) => (output += chunk));
  worker.on("exit", () => (exited = true));
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline && !exited) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`);
      check(response.status === 404, `the worker answered / with ${response.status}, not the program's 404`);
      return;
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("the worker")) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`wrangler dev did not answer on port ${port}${exited ? " (it exited)" : " within 90s"}:\n${output}`);
}

async function stopWorker(): Promise<void> {
  const child = worker;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid, "SIGTERM");
  const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

async function main(): Promise<void> {
  step(`packing dokit into ${dir}`);
  await run("pnpm", ["pack", "--pack-destination", dir], join(repo, "packages/dokit"));
  const version = JSON.parse(readFileSync(join(repo, "packages/dokit/package.json"), "utf8")).version;
  const tarball = join(dir, `dokit-${version}.tgz`);
  check(existsSync(tarball), `pnpm pack wrote no ${tarball}`);

  const files = quickStartFiles();
  for (const [path, body] of files) {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), body);
  }
  step(`saved ${[...files.keys()].join(", ")}`);

  // The README's two install commands, with this workspace's versions.
  await run("pnpm", ["add", "--prefer-offline", tarball], project);
  const tools = ["wrangler", "typescript", "@cloudflare/workers-types"].map((name) => `${name}@${workspaceVersion(name)}`);
  await run("pnpm", ["add", "--prefer-offline", "-D", ...tools], project);
  step(`installed the tarball and ${tools.join(", ")}`);

  // What was published: no dev-only export condition, the metadata users see.
  const manifest = JSON.parse(readFileSync(join(project, "node_modules/dokit/package.json"), "utf8"));
  check(!JSON.stringify(manifest.exports).includes("@dokit/source"), "the tarball's exports name the dev-only @dokit/source condition");
  check(manifest.exports["./client"]?.import === "./dist/client/index.js", "the tarball's exports lack ./client");
  check(manifest.engines?.node === ">=22", `the tarball's engines.node is ${manifest.engines?.node}`);
  check(manifest.peerDependencies?.["@modelcontextprotocol/server"] === "^2.4.0", "the MCP peer range is not ^2.4.0");
  for (const name of ["README.md", "LICENSE"]) check(existsSync(join(project, "node_modules/dokit", name)), `the tarball has no ${name}`);

  await run("pnpm", ["exec", "tsc"], project);
  step("tsc: the quick start typechecks");

  const port = await freePort();
  const client = files.get("client.ts") ?? "";
  check(client.includes('"localhost:8787"'), 'client.ts no longer connects to "localhost:8787"');
  writeFileSync(join(project, "client.ts"), client.replace('"localhost:8787"', `"127.0.0.1:${port}"`));
  await startWorker(port);
  step(`wrangler dev answers on 127.0.0.1:${port}`);

  // Twice: the second run sees the first run's increment, stored in SQLite.
  for (const count of [0, 1]) {
    const output = await run("node", ["client.ts"], project, 30_000);
    const expected = `count: ${count}\nrefused: State update rejected\n`;
    check(output.endsWith(expected), `node client.ts printed:\n${output}\nexpected it to end with:\n${expected}`);
  }
  step("client.ts: identity and state received, the refused value rolled back, the increment stored");
}

try {
  await main();
  await stopWorker();
  if (process.env.QUICKSTART_KEEP) console.log(`quickstart: the folder is kept: ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
  console.log(`quickstart: PASS in ${((Date.now() - started) / 1000).toFixed(1)}s`);
} catch (error) {
  await stopWorker();
  console.error(`quickstart: FAIL: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`quickstart: the folder is kept: ${dir}`);
  process.exit(1);
}
