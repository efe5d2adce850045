// The room rule, read from its one source: the folder table of docs/architecture.md ("Who owns
// what"). Each row names a folder of packages/dokit/src, its kind and what it may import; this test
// parses that table and checks the code against it, both ways (an import the row does not list, and
// a listed import the code no longer has, both fail), so the map and the code cannot drift apart.
//
// The kinds, and what the room rule lets each list whatever its row says:
// - core (`lifecycle/`, `protocol/`): only the core, not even a type from elsewhere;
// - engine (code two or more folders are built on, named for what it holds, not exported): the
//   core and other engines;
// - capability: the core and engines; another capability only for types, or as an exception;
// - client (browser-safe): `protocol/` at run time; anything else only for types, or as an exception.
// An exception is written in the row with its reason, so the exceptions are exactly what the table says.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../src/", import.meta.url).pathname;
const doc = new URL("../../../docs/architecture.md", import.meta.url).pathname;

const KINDS = ["core", "engine", "capability", "client"] as const;
type Kind = (typeof KINDS)[number];
/** One entry of a row's "may import" cell. */
interface Allowed {
  folder: string;
  /** `run`: at run time (and types); `types`: type-only imports; `exception`: a run-time import the room rule forbids but this row allows. */
  how: "run" | "types" | "exception";
  why?: string;
}
interface Row {
  folder: string;
  kind: Kind;
  /** Whether the cell says `core` (may import `lifecycle/` and `protocol/`). */
  core: boolean;
  allowed: Allowed[];
}

const TABLE_HEADING = "## Who owns what";
const TABLE_HEADER = "| folder | kind | may import | owns |";

/**
 * Reads one "may import" cell: `—` (nothing), or entries separated by `, `, each `core`, `` `x/` ``,
 * `` `x/` (types) `` or `` `x/` (exception: why) ``.
 * @throws Error naming the cell for anything else
 */
function parseMayImport(cell: string): { core: boolean; allowed: Allowed[] } {
  if (cell === "—") return { core: false, allowed: [] };
  const entry = /(core|`([a-z0-9-]+)\/`(?: \((types|exception: [^()]+)\))?)(, |$)/y;
  const allowed: Allowed[] = [];
  let core = false;
  while (entry.lastIndex < cell.length) {
    const at = entry.lastIndex;
    const match = entry.exec(cell);
    if (!match || match.index !== at) throw new Error(`cannot read the "may import" cell "${cell}" at "${cell.slice(at)}"`);
    const [, whole, folder, note] = match;
    if (whole === "core") core = true;
    else if (note === undefined) allowed.push({ folder: folder as string, how: "run" });
    else if (note === "types") allowed.push({ folder: folder as string, how: "types" });
    else allowed.push({ folder: folder as string, how: "exception", why: note.slice("exception: ".length) });
    if (match[4] === "") return { core, allowed };
  }
  throw new Error(`the "may import" cell "${cell}" ends with a separator`);
}

/** @returns the rows of the folder table in `markdown` (the first table after its heading) */
function parseFolderTable(markdown: string): Row[] {
  const lines = markdown.split("\n");
  const start = lines.indexOf(TABLE_HEADING);
  if (start === -1) throw new Error(`docs/architecture.md has no "${TABLE_HEADING}" heading`);
  const header = lines.findIndex((line, i) => i > start && line.startsWith("|"));
  if (lines[header] !== TABLE_HEADER) throw new Error(`the folder table's header is "${lines[header]}", not "${TABLE_HEADER}"`);
  const rows: Row[] = [];
  for (let i = header + 2; i < lines.length && lines[i]?.startsWith("|"); i++) {
    const line = lines[i] as string;
    const cells = line.slice(1, -1).split(" | ").map((cell) => cell.trim());
    if (cells.length !== 4) throw new Error(`a folder row has ${cells.length} cells, not 4: ${line.slice(0, 80)}`);
    const [folderCell, kind, mayImport] = cells as [string, string, string, string];
    const folder = /^`([a-z0-9-]+)\/`$/.exec(folderCell)?.[1];
    if (!folder) throw new Error(`a folder row names "${folderCell}", not one folder as \`name/\``);
    if (!(KINDS as readonly string[]).includes(kind)) throw new Error(`${folder}/ is of kind "${kind}", not one of ${KINDS.join(", ")}`);
    rows.push({ folder, kind: kind as Kind, ...parseMayImport(mayImport) });
  }
  return rows;
}

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

/** @returns the imports of `folder`'s files from other folders */
function importsFrom(folder: string): Import[] {
  return sourceFiles(join(src, folder))
    .flatMap((file) => importsOf(file, readFileSync(file, "utf8")))
    .filter((entry) => entry.folder !== folder);
}

const folders = readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
const rows = parseFolderTable(readFileSync(doc, "utf8"));
const rowOf = new Map(rows.map((row) => [row.folder, row]));
const kindOf = (folder: string) => rowOf.get(folder)?.kind;
const CORE = rows.filter((row) => row.kind === "core").map((row) => row.folder);

/** @returns the problems of one row's imports: what the code imports that the row does not allow, and what the row lists that the code does not import */
function checkRow(row: Row, imports: readonly Import[]): string[] {
  const problems: string[] = [];
  for (const entry of imports) {
    const listed = row.allowed.find((allowed) => allowed.folder === entry.folder);
    if (row.core && CORE.includes(entry.folder) && row.kind !== "core") continue;
    if (listed && (listed.how !== "types" || entry.typeOnly)) continue;
    const how = entry.typeOnly ? "types of" : "at run time";
    problems.push(`${relative(src, entry.file)} imports ${how} ${entry.folder}/, which the row of ${row.folder}/ does not allow`);
  }
  if (row.core && !imports.some((entry) => CORE.includes(entry.folder))) problems.push(`the row of ${row.folder}/ says core, but it imports nothing of ${CORE.join(", ")}`);
  for (const allowed of row.allowed) {
    const used = imports.filter((entry) => entry.folder === allowed.folder);
    if (!used.length) problems.push(`the row of ${row.folder}/ lists ${allowed.folder}/, which it does not import`);
    else if (allowed.how !== "types" && used.every((entry) => entry.typeOnly)) problems.push(`the row of ${row.folder}/ lists ${allowed.folder}/ at run time, which it imports only for types: list it as (types)`);
  }
  return problems;
}

/** @returns where a row lists more than the room rule lets its kind import */
function breachesOfKind(row: Row): string[] {
  const breaches: string[] = [];
  const say = (allowed: Allowed, why: string) => breaches.push(`${row.folder}/ (${row.kind}) may not list ${allowed.folder}/${allowed.how === "run" ? "" : ` (${allowed.how})`}: ${why}`);
  if (row.core && (row.kind === "core" || row.kind === "client")) breaches.push(`${row.folder}/ (${row.kind}) may not say core: list what it imports`);
  for (const allowed of row.allowed) {
    const target = kindOf(allowed.folder);
    if (target === undefined) say(allowed, "no row names that folder");
    else if (row.kind === "core") {
      if (target !== "core" || allowed.how !== "run") say(allowed, "the core imports only the core");
    } else if (row.kind === "engine") {
      if (target !== "core" && target !== "engine") say(allowed, "an engine imports only the core and engines");
      else if (allowed.how === "exception") say(allowed, "an engine has no exceptions");
    } else if (row.kind === "capability") {
      if ((target === "capability" || target === "client") && allowed.how === "run") say(allowed, "another capability only for types, or as an exception with its reason");
    } else if (allowed.folder !== "protocol" && allowed.how === "run") {
      say(allowed, "the browser-safe client imports only protocol/ at run time, anything else for types or as an exception");
    }
  }
  return breaches;
}

describe("import rules (docs/architecture.md's folder table)", () => {
  it("reads the table (the rules below check something)", () => {
    expect(parseMayImport("core, `rows/`, `websockets/` (types), `client/` (exception: useAgent is built on AgentClient)")).toEqual({
      core: true,
      allowed: [
        { folder: "rows", how: "run" },
        { folder: "websockets", how: "types" },
        { folder: "client", how: "exception", why: "useAgent is built on AgentClient" },
      ],
    });
    expect(parseMayImport("—")).toEqual({ core: false, allowed: [] });
    expect(() => parseMayImport("core, rows")).toThrow(/cannot read/);
    expect(() => parseMayImport("`rows/` (maybe)")).toThrow(/cannot read/);
    // The rows the rest of this file relies on, as the table says them.
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(rowOf.get("lifecycle")).toEqual({ folder: "lifecycle", kind: "core", core: false, allowed: [{ folder: "protocol", how: "run" }] });
    expect(rowOf.get("protocol")).toEqual({ folder: "protocol", kind: "core", core: false, allowed: [] });
    expect(rowOf.get("rpc")?.kind).toBe("engine");
    expect(rowOf.get("websockets")).toMatchObject({ kind: "capability", core: true });
    expect(rowOf.get("websockets")?.allowed).toContainEqual({ folder: "rpc", how: "run" });
    expect(rowOf.get("client")?.allowed).toEqual([
      { folder: "protocol", how: "run" },
      { folder: "rpc", how: "types" },
    ]);
    // The exceptions, as the table lists them.
    const exceptions = rows.flatMap((row) => row.allowed.filter((allowed) => allowed.how === "exception").map((allowed) => `${row.folder} → ${allowed.folder}`));
    expect(exceptions).toEqual(expect.arrayContaining(["react → client", "testing → websockets"]));
    // The import reader, on each form of import statement.
    expect(folders.filter((folder) => ["shared", "common", "utils", "helpers", "misc"].includes(folder))).toEqual([]);
    expect(importsFrom("websockets").some((entry) => entry.folder === "rpc" && !entry.typeOnly)).toBe(true);
    expect(importsOf("x.ts", 'import type { A } from "../b/c";\nimport { type D } from "../e/f";\nimport { g } from "../h/i";')).toEqual([
      { file: "x.ts", folder: "b", typeOnly: true },
      { file: "x.ts", folder: "e", typeOnly: true },
      { file: "x.ts", folder: "h", typeOnly: false },
    ]);
    // A row that forbids an import the code has is caught, and so is one that lists an import the code lacks.
    expect(checkRow({ folder: "yjs", kind: "capability", core: true, allowed: [{ folder: "rows", how: "run" }] }, importsFrom("yjs")).join("\n")).toMatch(
      /imports at run time frames\/, which the row of yjs\/ does not allow[^]*imports types of websockets\//,
    );
    expect(checkRow({ folder: "utf8", kind: "engine", core: false, allowed: [{ folder: "rows", how: "run" }] }, importsFrom("utf8"))).toEqual([
      "the row of utf8/ lists rows/, which it does not import",
    ]);
  });

  it("names every folder of src/ in exactly one row, and every row names a folder", () => {
    const named = rows.map((row) => row.folder);
    expect(named.filter((folder, i) => named.indexOf(folder) !== i), "folders with more than one row").toEqual([]);
    expect(folders.filter((folder) => !named.includes(folder)), "folders with no row").toEqual([]);
    expect(named.filter((folder) => !folders.includes(folder)), "rows with no folder").toEqual([]);
  });

  it("lists for each kind only what the room rule lets it import", () => {
    expect(CORE.sort()).toEqual(["lifecycle", "protocol"]);
    expect(rows.flatMap(breachesOfKind)).toEqual([]);
  });

  it("exports every folder but the engines; each engine serves two or more folders", () => {
    const exported = JSON.parse(readFileSync(join(src, "../entries.json"), "utf8")) as string[];
    const engines = rows.filter((row) => row.kind === "engine").map((row) => row.folder);
    expect(engines.length).toBeGreaterThan(0);
    expect(exported.filter((folder) => engines.includes(folder)), "exported engines").toEqual([]);
    expect(folders.filter((folder) => !engines.includes(folder) && !exported.includes(folder)), "folders neither exported nor engines").toEqual([]);
    const lonely = engines.filter((engine) => rows.filter((row) => row.allowed.some((allowed) => allowed.folder === engine)).length < 2);
    expect(lonely, "engines one folder uses (they belong beside it)").toEqual([]);
  });

  it.each(folders)("src/%s imports exactly what its row says", (folder) => {
    const row = rowOf.get(folder);
    expect(row, `no row for ${folder}/`).toBeDefined();
    expect(checkRow(row as Row, importsFrom(folder))).toEqual([]);
  });

  it("the browser-safe client imports at run time only protocol/ (and its own files)", () => {
    const imported = importsFrom("client");
    expect(imported.some((entry) => entry.folder === "protocol" && !entry.typeOnly)).toBe(true);
    expect(imported.filter((entry) => !entry.typeOnly && entry.folder !== "protocol").map((entry) => `${relative(src, entry.file)} imports ${entry.folder}/`)).toEqual([]);
  });

  it("docs/architecture.md's Dependencies table lists exactly the package's dependencies and peers, and only their folders import them", () => {
    const manifest = JSON.parse(readFileSync(join(src, "../package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    const expected = [
      ...Object.keys(manifest.dependencies ?? {}).map((name) => `${name}: dependency`),
      ...Object.keys(manifest.peerDependencies ?? {}).map((name) => `${name}: ${manifest.peerDependenciesMeta?.[name]?.optional ? "optional peer" : "peer"}`),
    ];
    const markdown = readFileSync(doc, "utf8").split("\n");
    const from = markdown.indexOf("## Dependencies");
    expect(from, "a ## Dependencies heading").toBeGreaterThan(-1);
    const header = markdown.findIndex((line, i) => i > from && line.startsWith("|"));
    expect(markdown[header]).toBe("| package | as | why |");
    const listed: string[] = [];
    for (let i = header + 2; markdown[i]?.startsWith("|"); i++) {
      const [name, as] = (markdown[i] as string).slice(1, -1).split(" | ").map((cell) => cell.trim());
      listed.push(`${/^`([^`]+)`$/.exec(name ?? "")?.[1] ?? name}: ${as}`);
    }
    expect(listed.sort()).toEqual(expected.sort());
    // Which folders may import each (a dependency imported from elsewhere would ship where the docs say it does not).
    const owners: Record<string, string[]> = {
      "@noble/hashes": ["sessions"],
      capnweb: ["capnweb", "client"],
      croner: ["schedule"],
      "@modelcontextprotocol/server": ["mcp"],
      "@modelcontextprotocol/client": ["mcp-client"],
      react: ["react"],
      yjs: ["yjs"],
    };
    expect(Object.keys(owners).sort()).toEqual(expected.map((entry) => entry.slice(0, entry.lastIndexOf(":"))).sort());
    const importers: Record<string, Set<string>> = {};
    for (const folder of folders) {
      for (const file of sourceFiles(join(src, folder))) {
        const text = readFileSync(file, "utf8");
        for (const name of Object.keys(owners)) {
          if (new RegExp(`from "${name}(/[^"]*)?"|import\\("${name}(/[^"]*)?"\\)`).test(text)) (importers[name] ??= new Set()).add(folder);
        }
      }
    }
    expect(Object.fromEntries(Object.entries(importers).map(([name, found]) => [name, [...found].sort()]))).toEqual(owners);
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
});
