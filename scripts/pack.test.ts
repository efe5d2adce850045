// scripts/pack.sh run by a real bash in a copy of the repository's scripts whose
// pnpm is a stand-in: on a fresh clone bootstrap.sh installs the workspace first,
// and whatever that install prints, stdout holds the tarball's path alone (the
// README and scripts/quickstart.ts read it).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterEach, expect, it } from "vitest";

const repo = join(import.meta.dirname, "..");
const made: string[] = [];
afterEach(() => made.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

it("prints only the tarball's path on stdout, even when bootstrap installs the workspace first", () => {
  const root = mkdtempSync(join(tmpdir(), "dokit-pack-"));
  made.push(root);
  mkdirSync(join(root, "scripts"));
  for (const file of ["pack.sh", "bootstrap.sh"]) copyFileSync(join(repo, "scripts", file), join(root, "scripts", file));
  copyFileSync(join(repo, "package.json"), join(root, "package.json"));
  writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n"); // no node_modules: bootstrap runs `pnpm install`
  mkdirSync(join(root, "packages/dokit"), { recursive: true });
  writeFileSync(join(root, "packages/dokit/package.json"), JSON.stringify({ name: "dokit", version: "9.8.7" }));
  // A pnpm that talks on stdout as the real one does, and packs an empty file.
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "pnpm"),
    [
      "#!/bin/sh",
      'case "$1" in',
      "  --version) echo 10.0.0 ;;",
      "  install) echo 'Packages: +612'; echo 'Progress: resolved 612, reused 612, downloaded 0, added 612, done' ;;",
      '  pack) echo "dokit-9.8.7.tgz"; : > "$3/dokit-9.8.7.tgz" ;;',
      "esac",
    ].join("\n") + "\n",
    { mode: 0o755 },
  );
  const destination = mkdtempSync(join(tmpdir(), "dokit-pack-out-"));
  made.push(destination);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_|PNPM_)/i.test(key)));
  const result = spawnSync("bash", [join(root, "scripts/pack.sh"), destination], {
    encoding: "utf8",
    env: { ...clean, PATH: [bin, dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter) },
    timeout: 30_000,
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stdout).toBe(`${destination}/dokit-9.8.7.tgz\n`);
  expect(result.stderr).toContain("Packages: +612");
  expect(result.stderr).toContain(`install it in your project with: npm install ${destination}/dokit-9.8.7.tgz`);
});
