// Generates package.json#exports from entries.json (the tsdown entry list).
// `node scripts/exports.ts` writes it; `--check` fails when they differ.
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const entries: string[] = JSON.parse(readFileSync(new URL("entries.json", root), "utf8"));
const pkgUrl = new URL("package.json", root);
const pkg = JSON.parse(readFileSync(pkgUrl, "utf8"));

const exports: Record<string, unknown> = {};
for (const name of [...entries].sort()) {
  exports[`./${name}`] = {
    "@dokit/source": `./src/${name}/index.ts`,
    types: `./dist/${name}/index.d.ts`,
    import: `./dist/${name}/index.js`,
  };
}
exports["./package.json"] = "./package.json";

if (process.argv.includes("--check")) {
  if (JSON.stringify(pkg.exports) !== JSON.stringify(exports)) {
    console.error("package.json#exports does not match entries.json: run `pnpm --filter dokit exports`");
    process.exit(1);
  }
  console.log(`exports match entries.json (${entries.length} subpaths)`);
} else {
  pkg.exports = exports;
  writeFileSync(pkgUrl, `${JSON.stringify(pkg, null, 2)}\n`);
  console.log(`wrote ${entries.length} subpaths to package.json#exports`);
}
