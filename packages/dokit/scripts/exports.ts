// Generates package.json#exports from entries.json (the tsdown entry list):
// `exports` for the workspace, where the `@dokit/source` condition lets tests
// and examples run on src/*.ts without a build, and `publishConfig.exports`
// for the tarball (`pnpm pack` / `pnpm publish` swap it in), which names only
// the built files. `node scripts/exports.ts` writes both; `--check` fails when
// either differs.
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const entries: string[] = JSON.parse(readFileSync(new URL("entries.json", root), "utf8"));
const pkgUrl = new URL("package.json", root);
const pkg = JSON.parse(readFileSync(pkgUrl, "utf8"));

function exportsMap(withSource: boolean): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (const name of [...entries].sort()) {
    map[`./${name}`] = {
      ...(withSource ? { "@dokit/source": `./src/${name}/index.ts` } : {}),
      types: `./dist/${name}/index.d.ts`,
      import: `./dist/${name}/index.js`,
    };
  }
  map["./package.json"] = "./package.json";
  return map;
}

const workspace = exportsMap(true);
const published = exportsMap(false);

if (process.argv.includes("--check")) {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(pkg.exports, workspace) || !same(pkg.publishConfig?.exports, published)) {
    console.error("package.json#exports or #publishConfig.exports does not match entries.json: run `pnpm --filter dokit exports`");
    process.exit(1);
  }
  console.log(`exports match entries.json (${entries.length} subpaths, published without @dokit/source)`);
} else {
  pkg.exports = workspace;
  pkg.publishConfig = { ...pkg.publishConfig, exports: published };
  writeFileSync(pkgUrl, `${JSON.stringify(pkg, null, 2)}\n`);
  console.log(`wrote ${entries.length} subpaths to package.json#exports and #publishConfig.exports`);
}
