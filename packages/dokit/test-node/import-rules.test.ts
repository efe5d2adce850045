// The room rule. The core (`lifecycle/`, `protocol/`) imports nothing outside
// itself. An engine folder (`rpc/`, `jobs/`, `frames/`, …: code two capabilities
// are built on, named for what it holds, not exported) imports only the core and
// the engines that list it among their users. A capability folder imports the
// core, the engines it is built on (ENGINES below) and no other capability
// folder, type-only imports aside, save the documented exceptions. The
// browser-safe client imports at run time only `protocol/`.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../src/", import.meta.url).pathname;
const CORE = new Set(["lifecycle", "protocol"]);
/** The engine folders, and the capability folders each one serves. */
const ENGINES: Record<string, string[]> = {
  rpc: ["websockets", "callables", "capnweb", "client"],
  jobs: ["schedule", "queue", "tasks"],
  schema: ["state", "callables", "presence"],
  rows: ["state", "mcp", "yjs", "sessions"],
  origin: ["inspector", "mcp-client"],
  utf8: ["jobs", "tasks", "rooms", "mcp", "mcp-client", "streams", "presence"],
  thenable: ["websockets", "rpc", "state", "presence"],
  frames: ["websockets", "rpc", "state", "presence", "rooms", "yjs", "capnweb", "inspector", "sessions", "streams", "testing"],
};
/** The allowed exceptions: importer → imported, and why. */
const ALLOWED: Record<string, { folder: string; why: string }[]> = {
  react: [{ folder: "client", why: "useAgent is built on AgentClient" }],
  testing: [{ folder: "websockets", why: "connectionAttachment reads the attachment codec WebSockets owns" }],
};

interface Import {
  file: string;
  folder: string;
  typeOnly: boolean;
}

/** @returns every `import`/`export … from "../<folder>/…"` in `text`, with whether it carries types only */
function importsOf(file: string, text: string): Import[] {
  const found: Import[] = [];
  const statement = /^(import|export)\s+(type\s+)?([^;]*?)\s*from\s+"\.\.\/([^/"]+)\/[^"]*";/gms;
  for (const match of text.matchAll(statement)) {
    const [, , typeKeyword, clause = "", folder = ""] = match;
    // `import { type A, type B } from …` carries types only, like `import type { A, B }`.
    const names = /^\{([^}]*)\}$/.exec(clause.trim())?.[1]?.split(",").map((name) => name.trim()).filter(Boolean);
    const typeOnly = Boolean(typeKeyword) || (names !== undefined && names.length > 0 && names.every((name) => name.startsWith("type ")));
    found.push({ file, folder, typeOnly });
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const folders = readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);

describe("import rules", () => {
  it("finds the folders and their imports (the rules below check something)", () => {
    expect(folders).toEqual(expect.arrayContaining(["lifecycle", "protocol", "rpc", "jobs", "schema", "websockets", "state", "capnweb", "mcp"]));
    expect(folders.filter((folder) => ["shared", "common", "utils", "helpers", "misc"].includes(folder))).toEqual([]);
    const websockets = sourceFiles(join(src, "websockets")).flatMap((file) => importsOf(file, readFileSync(file, "utf8")));
    expect(websockets.some((entry) => entry.folder === "rpc" && !entry.typeOnly)).toBe(true);
    expect(importsOf("x.ts", 'import type { A } from "../b/c";\nimport { type D } from "../e/f";\nimport { g } from "../h/i";')).toEqual([
      { file: "x.ts", folder: "b", typeOnly: true },
      { file: "x.ts", folder: "e", typeOnly: true },
      { file: "x.ts", folder: "h", typeOnly: false },
    ]);
  });

  it("every engine exists, is not exported, and is imported by each folder ENGINES lists for it (the table is the map)", () => {
    const exported = JSON.parse(readFileSync(join(src, "../entries.json"), "utf8")) as string[];
    const stale: string[] = [];
    for (const [engine, users] of Object.entries(ENGINES)) {
      expect(folders, engine).toContain(engine);
      expect(exported, engine).not.toContain(engine);
      for (const user of users) {
        const imports = sourceFiles(join(src, user)).flatMap((file) => importsOf(file, readFileSync(file, "utf8")));
        if (!imports.some((entry) => entry.folder === engine)) stale.push(`${user}/ is listed for ${engine}/ but does not import it`);
      }
    }
    expect(stale).toEqual([]);
  });

  it("the browser-safe client imports at run time only protocol/ (and its own files)", () => {
    const imported = sourceFiles(join(src, "client")).flatMap((file) => importsOf(file, readFileSync(file, "utf8")));
    expect(imported.some((entry) => entry.folder === "protocol" && !entry.typeOnly)).toBe(true);
    expect(imported.filter((entry) => !entry.typeOnly && entry.folder !== "protocol").map((entry) => `${relative(src, entry.file)} imports ${entry.folder}/`)).toEqual([]);
  });

  it("only src/mcp imports the MCP server SDK, and only src/mcp-client the MCP client SDK", () => {
    const owners: Record<string, string> = { "@modelcontextprotocol/server": "mcp", "@modelcontextprotocol/client": "mcp-client" };
    const violations: string[] = [];
    for (const folder of folders) {
      for (const file of sourceFiles(join(src, folder))) {
        for (const [sdk, owner] of Object.entries(owners)) {
          if (folder !== owner && readFileSync(file, "utf8").includes(`"${sdk}"`)) violations.push(`${relative(src, file)} imports ${sdk}`);
        }
      }
    }
    expect(violations).toEqual([]);
    expect(sourceFiles(join(src, "mcp-client")).some((file) => readFileSync(file, "utf8").includes('"@modelcontextprotocol/client"'))).toBe(true);
  });

  it("only src/yjs imports yjs or y-protocols (optional peers)", () => {
    const violations: string[] = [];
    for (const folder of folders) {
      if (folder === "yjs") continue;
      for (const file of sourceFiles(join(src, folder))) {
        const text = readFileSync(file, "utf8");
        for (const peer of ["yjs", "y-protocols", "lib0"]) {
          if (new RegExp(`from "${peer}(/[^"]*)?"|import\\("${peer}(/[^"]*)?"\\)`).test(text)) violations.push(`${relative(src, file)} imports ${peer}`);
        }
      }
    }
    expect(violations).toEqual([]);
    expect(sourceFiles(join(src, "yjs")).some((file) => readFileSync(file, "utf8").includes('from "yjs"'))).toBe(true);
  });

  it.each(folders)("src/%s imports only what the room rule allows", (folder) => {
    const violations: string[] = [];
    for (const file of sourceFiles(join(src, folder))) {
      for (const entry of importsOf(file, readFileSync(file, "utf8"))) {
        if (entry.folder === folder) continue;
        // The core imports only itself, not even a type from elsewhere.
        if (CORE.has(folder)) {
          if (!CORE.has(entry.folder)) violations.push(`${relative(src, file)} (core) imports ${entry.folder}/`);
          continue;
        }
        if (CORE.has(entry.folder)) continue;
        // An engine imports only the core and the engines it is built on (ENGINES lists it among their users).
        if (folder in ENGINES) {
          if (ENGINES[entry.folder]?.includes(folder)) continue;
          violations.push(`${relative(src, file)} (engine) imports ${entry.folder}/`);
          continue;
        }
        if (ENGINES[entry.folder]?.includes(folder)) continue;
        if (entry.typeOnly && !(entry.folder in ENGINES)) continue;
        if (ALLOWED[folder]?.some((allowed) => allowed.folder === entry.folder)) continue;
        violations.push(`${relative(src, file)} imports ${entry.folder}/`);
      }
    }
    expect(violations).toEqual([]);
  });
});
