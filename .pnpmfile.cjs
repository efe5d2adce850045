// pnpm hooks for this workspace.
module.exports = {
  hooks: {
    // What `pnpm pack` and `pnpm publish` write into a package's tarball: its
    // users install it, so it carries no devDependencies (its users would never
    // install them) and no scripts (they build the workspace and name files
    // the tarball does not ship).
    beforePacking(manifest) {
      delete manifest.devDependencies;
      delete manifest.scripts;
      return manifest;
    },
  },
};
