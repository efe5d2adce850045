#!/usr/bin/env bash
# Builds dokit and writes its npm tarball, dokit-<version>.tgz, to the
# repository root (or to the folder given as $1), then prints its absolute path
# alone on stdout, and on stderr the command that installs it from any folder.
# Installs Node and pnpm first when the machine lacks them (scripts/bootstrap.sh).
set -euo pipefail
destination=$(realpath "${1:-$(dirname "$0")/..}")
# stdout is the tarball's path alone (scripts read it): what installs print goes to stderr.
source "$(dirname "$0")/bootstrap.sh" >&2
cd "$dokit_root/packages/dokit"
pnpm pack --pack-destination "$destination" >/dev/null
tarball="$destination/dokit-$(node -p 'require("./package.json").version').tgz"
echo "$tarball"
echo "install it in your project with: npm install $tarball" >&2
