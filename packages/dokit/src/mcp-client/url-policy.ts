// Which server URLs an object may fetch. Workers can reach any public address,
// so the host approves URLs: by default https only, and no private or loopback
// address unless the object runs in local development.

/** @returns whether `hostname` (as `URL.hostname` spells it) names a loopback, private, link-local or unspecified address */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal")) return true;
  const v4 = ipv4(host);
  if (v4) return privateV4(v4);
  if (!host.includes(":")) return false;
  // IPv6: loopback, unspecified, unique-local (fc00::/7), link-local (fe80::/10), IPv4-mapped.
  if (host === "::1" || host === "::") return true;
  if (/^f[cd][0-9a-f]{0,2}:/.test(host) || /^fe[89ab][0-9a-f]?:/.test(host)) return true;
  const mapped = /^::ffff:(.+)$/.exec(host)?.[1];
  if (mapped) {
    const inner = ipv4(mapped) ?? hexMapped(mapped);
    return inner ? privateV4(inner) : true;
  }
  return false;
}

/** @returns whether `hostname` is a loopback name or address (`wrangler dev`, a test) */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function ipv4(host: string): number[] | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((b) => b <= 255) ? bytes : undefined;
}

function hexMapped(text: string): number[] | undefined {
  const m = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (!m) return undefined;
  const hi = Number.parseInt(m[1] as string, 16);
  const lo = Number.parseInt(m[2] as string, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255];
}

function privateV4([a, b]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && (b as number) >= 64 && (b as number) <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && (b as number) >= 16 && (b as number) <= 31) ||
    (a === 192 && b === 168) ||
    (a as number) >= 224
  );
}

/**
 * The default URL policy: `https:` to a public host; in local development also `http:`
 * and private or loopback hosts.
 * @returns `undefined` when allowed, else why not
 */
export function defaultUrlRefusal(url: URL, local: boolean): string | undefined {
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${url.protocol} URLs are not allowed`;
  if (local) return undefined;
  if (url.protocol !== "https:") return "only https URLs are allowed outside local development";
  if (isPrivateHost(url.hostname)) return "private and loopback addresses are not allowed outside local development";
  return undefined;
}
