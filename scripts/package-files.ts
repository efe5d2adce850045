// packages/dokit's prepack: copies the repository's LICENSE and README.md into
// the package folder for its tarball. The registry's page shows that README
// outside the repository, where a relative link such as docs/state.md points
// nowhere, so every relative link becomes an absolute one into the repository
// the manifest names (package.json#repository, on its main branch).
import { existsSync, readFileSync, statSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const packageDir = join(root, "packages/dokit");
const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
const repository = /^git\+(https:\/\/github\.com\/[^/]+\/[^/]+?)\.git$/.exec(manifest.repository?.url ?? "")?.[1];
if (!repository) throw new Error(`package-files: packages/dokit/package.json#repository.url is not a git+https GitHub URL: ${manifest.repository?.url}`);

/** The README with each relative link (`](docs/x.md#a)`) made absolute: blob/ for a file, tree/ for a folder. */
function absoluteLinks(readme: string, base: string): string {
  return readme.replace(/\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s]+)\)/gi, (_match, target: string) => {
    const path = target.split("#", 1)[0]!.replace(/^\.\//, "");
    const folder = existsSync(join(root, path)) && statSync(join(root, path)).isDirectory();
    return `](${base}/${folder ? "tree" : "blob"}/main/${target.replace(/^\.\//, "")})`;
  });
}

writeFileSync(join(packageDir, "README.md"), absoluteLinks(readFileSync(join(root, "README.md"), "utf8"), repository));
copyFileSync(join(root, "LICENSE"), join(packageDir, "LICENSE"));
