#!/usr/bin/env bash
# Builds dokit and writes its npm tarball, dokit-<version>.tgz, to the
# repository root (or to the folder given as $1). Installs Node and pnpm first
# when the machine lacks them (scripts/bootstrap.sh).
set -euo pipefail
destination=$(realpath "${1:-$(dirname "$0")/..}")
source "$(dirname "$0")/bootstrap.sh"
cd packages/dokit
pnpm pack --pack-destination "$destination"
