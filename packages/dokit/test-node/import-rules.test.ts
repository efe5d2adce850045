// The room rule: a capability folder never imports another capability folder
// (type-only imports aside). What two of them need lives in `src/shared/`;
// `lifecycle/` and `protocol/` are the core every capability builds on. The
// core and `shared/` import no capability at all.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../src/", import.meta.url).pathname;
const CORE = new Set(["lifecycle", "protocol", "shared"]);
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
  it("finds the folders and their imports (the rule below checks something)", () => {
    expect(folders).toEqual(expect.arrayContaining(["lifecycle", "protocol", "shared", "websockets", "state", "capnweb", "mcp"]));
    const websockets = sourceFiles(join(src, "websockets")).flatMap((file) => importsOf(file, readFileSync(file, "utf8")));
    expect(websockets.some((entry) => entry.folder === "shared" && !entry.typeOnly)).toBe(true);
    expect(importsOf("x.ts", 'import type { A } from "../b/c";\nimport { type D } from "../e/f";\nimport { g } from "../h/i";')).toEqual([
      { file: "x.ts", folder: "b", typeOnly: true },
      { file: "x.ts", folder: "e", typeOnly: true },
      { file: "x.ts", folder: "h", typeOnly: false },
    ]);
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

  it.each(folders)("src/%s imports no capability folder but through types", (folder) => {
    const violations: string[] = [];
    for (const file of sourceFiles(join(src, folder))) {
      for (const entry of importsOf(file, readFileSync(file, "utf8"))) {
        if (entry.folder === folder || CORE.has(entry.folder)) continue;
        // The core and shared/ may not even name a capability's types: they come first.
        if (entry.typeOnly && !CORE.has(folder)) continue;
        if (ALLOWED[folder]?.some((allowed) => allowed.folder === entry.folder)) continue;
        violations.push(`${relative(src, file)} imports ${entry.folder}/`);
      }
    }
    expect(violations).toEqual([]);
  });
});
