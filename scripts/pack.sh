#!/usr/bin/env bash
# Builds dokit and writes its npm tarball, dokit-<version>.tgz, to the
# repository root (or to the folder given as $1), then prints the command that
# installs it from any folder. Installs Node and pnpm first when the machine
# lacks them (scripts/bootstrap.sh).
set -euo pipefail
destination=$(realpath "${1:-$(dirname "$0")/..}")
source "$(dirname "$0")/bootstrap.sh"
cd "$dokit_root/packages/dokit"
pnpm pack --pack-destination "$destination" >/dev/null
tarball="$destination/dokit-$(node -p 'require("./package.json").version').tgz"
echo "$tarball"
echo "install it in your project with: npm install $tarball" >&2
