// `pnpm test:quickstart`: the README's quick start, run the way a newcomer
// runs it, with Node and npm only. Packs dokit with scripts/pack.sh and checks
// the tarball with publint and @arethetypeswrong/cli (ESM only) and what its
// manifest and README promise; saves every README code block marked
// `<!-- quick-start: <path> -->` into an empty temporary folder; then runs the
// block marked `<!-- quick-start: commands -->` line by line on a PATH with this
// Node and the machine's npm and no pnpm, as written: npm installs the tarball
// (the one substitution: its placeholder path) and the dev tools at the versions
// the README names (from the registry; they must be this workspace's, the ones
// its tests run with), npx tsc typechecks, npx wrangler dev serves on a free
// loopback port and node client.ts runs against it twice. Prints PASS or FAIL; on failure
// (or with QUICKSTART_KEEP=1) the folder is kept for a look.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { which } from "./which.ts";

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
function run(command: string, args: string[], cwd: string, timeoutMs = 180_000, env = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
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

/** The README's quick-start blocks: each fenced block right after `<!-- quick-start: <path> -->`. */
function quickStartBlocks(): Map<string, string> {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  const blocks = new Map<string, string>();
  for (const match of readme.matchAll(/<!-- quick-start: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g)) {
    const [, path, body] = match as unknown as [string, string, string];
    const firstLine = body.split("\n", 1)[0] ?? "";
    // A block whose first line is a comment names its own file: keep the two in step.
    if (firstLine.startsWith("//")) check(firstLine.startsWith(`// ${path}`), `README: the block marked ${path} starts with "${firstLine}"`);
    check(!blocks.has(path), `README: two blocks are marked ${path}`);
    blocks.set(path, body);
  }
  for (const path of ["src/index.ts", "package.json", "wrangler.jsonc", "env.d.ts", "tsconfig.json", "client.ts", "commands"]) {
    check(blocks.has(path), `README: no code block marked <!-- quick-start: ${path} -->`);
  }
  return blocks;
}

function workspaceVersion(name: string): string {
  return JSON.parse(readFileSync(join(repo, "node_modules", name, "package.json"), "utf8")).version;
}

/**
 * A newcomer's shell: this Node (24, or whatever runs this script) and the
 * machine's npm in a folder of their own at the front of PATH; no pnpm, no
 * workspace bins. What `pnpm run` adds to the environment is left out; the
 * machine's own settings (npm_config_*, proxies, NODE_EXTRA_CA_CERTS) stay.
 */
function newcomerEnv(): NodeJS.ProcessEnv {
  const original = process.env.PATH ?? "";
  const npm = which("npm", original);
  const npx = which("npx", original);
  check(npm && npx, "no npm and npx on PATH: the quick start is run with npm");
  const bin = join(dir, "bin");
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, "node"));
  symlinkSync(realpathSync(npm), join(bin, "npm"));
  symlinkSync(realpathSync(npx), join(bin, "npx"));
  const kept = original
    .split(delimiter)
    .filter((folder) => folder && !folder.includes("node_modules") && !folder.startsWith(join(repo, ".node")))
    .filter((folder) => !["pnpm", "pnpx"].some((name) => which(name, folder)));
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const fromPnpm = /^(pnpm_|PNPM_|npm_(package|lifecycle|command|execpath|node_execpath)|npm_config_(user_agent|verify_deps_before_run)$|INIT_CWD$)/.test(key);
    if (!fromPnpm) env[key] = value;
  }
  env.PATH = [bin, ...kept].join(delimiter);
  env.npm_config_prefer_offline = "true"; // this machine's npm cache first, the registry for what it lacks
  return env;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts the README's `npx wrangler dev` on `port` and resolves once the worker answers HTTP. */
async function startWorker(command: string[], port: number, env: NodeJS.ProcessEnv): Promise<void> {
  let output = "";
  let exited = false;
  // detached: its own process group, so teardown stops npx, wrangler and workerd together.
  worker = spawn(command[0]!, [...command.slice(1), "--ip", "127.0.0.1", "--port", String(port)], {
    cwd: project,
    env,
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

/** The packed tarball as a registry would serve it: the linters made for it, then what the manifest and README promise. */
async function checkTarball(tarball: string): Promise<void> {
  const bin = join(repo, "node_modules/.bin");
  const publint = await run(join(bin, "publint"), ["run", "--strict", tarball], repo);
  step(`publint --strict: ${publint.trim().split("\n").at(-1)}`);
  // ESM only: no `require` condition, so node10 and node16-from-CJS resolution are out of scope.
  // It exits non-zero on any problem in the resolutions it checks.
  await run(join(bin, "attw"), [tarball, "--profile", "esm-only", "--format", "ascii", "--no-color"], repo);
  step("attw --profile esm-only: no problems (node16 from ESM and bundler resolve every subpath's types and code)");

  const unpacked = join(dir, "unpacked");
  mkdirSync(unpacked);
  await run("tar", ["-xzf", tarball, "-C", unpacked], dir);
  const manifest = JSON.parse(readFileSync(join(unpacked, "package/package.json"), "utf8"));
  check(!JSON.stringify(manifest.exports).includes("@dokit/source"), "the tarball's exports name the dev-only @dokit/source condition");
  check(manifest.exports["./client"]?.import === "./dist/client/index.js", "the tarball's exports lack ./client");
  check(manifest.engines?.node === ">=22", `the tarball's engines.node is ${manifest.engines?.node}`);
  check(manifest.peerDependencies?.["@modelcontextprotocol/server"] === "^2.4.0", "the MCP peer range is not ^2.4.0");
  check(!manifest.devDependencies, `the tarball's package.json has devDependencies: ${Object.keys(manifest.devDependencies ?? {}).join(", ")}`);
  check(!manifest.scripts, `the tarball's package.json has scripts: ${JSON.stringify(manifest.scripts)}`);
  for (const field of ["repository", "homepage", "bugs"]) check(manifest[field], `the tarball's package.json has no ${field}`);
  for (const name of ["README.md", "LICENSE"]) check(existsSync(join(unpacked, "package", name)), `the tarball has no ${name}`);
  // The registry shows the README outside the repository: a relative link would point nowhere there.
  const relative = [...readFileSync(join(unpacked, "package/README.md"), "utf8").matchAll(/\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s]+)\)/gi)];
  check(relative.length === 0, `the tarball's README has relative links: ${relative.map((link) => link[1]).join(", ")}`);
  step("the packed manifest and README: no devDependencies or scripts, repository/homepage/bugs, absolute links");
}

async function main(): Promise<void> {
  step(`packing dokit into ${dir} (scripts/pack.sh)`);
  const printed = await run("bash", [join(repo, "scripts/pack.sh"), dir], dir);
  const version = JSON.parse(readFileSync(join(repo, "packages/dokit/package.json"), "utf8")).version;
  const tarball = join(dir, `dokit-${version}.tgz`);
  check(printed === `${tarball}\n`, `scripts/pack.sh printed "${printed}" on stdout, not the tarball's absolute path ${tarball} alone`);
  check(existsSync(tarball), `scripts/pack.sh wrote no ${tarball}`);
  await checkTarball(tarball);

  const env = newcomerEnv();
  const shell = (line: string) => run("sh", ["-c", line], dir, 30_000, env);
  await shell("command -v pnpm").then(
    (found) => check(false, `pnpm is on the quick start's PATH: ${found.trim()}`),
    () => undefined,
  );
  const versions = await shell('echo "node $(node --version), npm $(npm --version)"');
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  check(major > 22 || (major === 22 && minor >= 18), `node ${process.versions.node} cannot run client.ts (22.18 or later can)`);
  step(`the quick start's shell: ${versions.trim()}, no pnpm on PATH`);

  const blocks = quickStartBlocks();
  mkdirSync(project);
  for (const [path, body] of blocks) {
    if (path === "commands") continue;
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), body);
  }
  step(`saved ${[...blocks.keys()].filter((path) => path !== "commands").join(", ")}`);

  // The README's commands, in order, each run as written except: the tarball's
  // placeholder path becomes the packed one, wrangler dev gets a free port, client.ts that port.
  const port = await freePort();
  const client = blocks.get("client.ts") ?? "";
  check(client.includes('"localhost:8787"'), 'client.ts no longer connects to "localhost:8787"');
  writeFileSync(join(project, "client.ts"), client.replace('"localhost:8787"', `"127.0.0.1:${port}"`));
  const commands = (blocks.get("commands") ?? "").split("\n").map((line) => line.replace(/#.*/, "").trim()).filter(Boolean);
  for (const line of commands) {
    const words = line.split(/\s+/);
    if (/^npm install \S+\.tgz$/.test(line)) {
      check(words[2]!.startsWith("/") && words[2]!.endsWith(`/dokit-${version}.tgz`), `README: "${line}" does not install an absolute path to dokit-${version}.tgz`);
      await run("npm", ["install", tarball], project, 300_000, env);
      step(`${line}: installed ${tarball}`);
    } else if (line.startsWith("npm install -D ")) {
      // Pinned, so the registry moving on cannot break it; pinned to what this workspace tests.
      for (const tool of words.slice(3)) {
        const [, name, pinned] = /^(@?[^@\s]+)@(\S+)$/.exec(tool) ?? [];
        check(name && pinned, `README: "${tool}" in "${line}" names no version (name@version): the registry moves`);
        check(pinned === workspaceVersion(name), `README: ${name}@${pinned}, but this workspace tests ${name}@${workspaceVersion(name)}`);
      }
      await run("npm", words.slice(1), project, 600_000, env);
      step(`${line}: installed from the registry`);
    } else if (line === "npx tsc") {
      await run("npx", ["tsc"], project, 120_000, env);
      step(`${line}: the quick start typechecks`);
    } else if (line === "npx wrangler dev") {
      await startWorker(words, port, env);
      step(`${line}: answers on 127.0.0.1:${port}`);
    } else if (line === "node client.ts") {
      // Twice: the second run sees the first run's increment, stored in SQLite.
      for (const count of [0, 1]) {
        const output = await run("node", ["client.ts"], project, 30_000, env);
        const expected = `count: ${count}\nrefused: State update rejected\n`;
        check(output.endsWith(expected), `node client.ts printed:\n${output}\nexpected it to end with:\n${expected}`);
        step(`${line} printed: ${output.trim().split("\n").join(" / ")}`);
      }
    } else {
      check(false, `README: the quick-start command "${line}" is not one this test knows how to run`);
    }
  }
  for (const expected of ["npm install /", "npm install -D", "npx tsc", "npx wrangler dev", "node client.ts"]) {
    check(commands.some((line) => line.startsWith(expected)), `README: the quick-start commands lack "${expected}"`);
  }
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
