// Which server URLs an object may fetch. Workers can reach any public address,
// so the host approves URLs: by default https only, and no address that is not
// globally reachable unless the object runs in local development.
//
// Addresses are checked as written in the URL (the WHATWG parser already turned
// every IPv4 spelling into dotted decimal and every IPv6 one into its compressed
// form). Names are not resolved: Workers have no DNS API, so a public name that
// resolves to a private address is not caught here.

/** @returns whether `hostname` (as `URL.hostname` spells it) names an address that is not globally reachable, or a local-only name */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (LOCAL_NAMES.some((name) => host === name || host.endsWith(`.${name}`))) return true;
  const v4 = ipv4(host);
  if (v4 !== undefined) return !globalV4(v4);
  if (!host.includes(":")) return false;
  const v6 = ipv6(host);
  return v6 ? !globalV6(v6) : true;
}

/** @returns whether `hostname` is a loopback name or address (`wrangler dev`, a test) */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Special-use names that only ever mean something on the local network or machine (RFC 6761, 6762, 8375; ICANN's `.internal`). */
const LOCAL_NAMES = ["localhost", "local", "internal", "home.arpa"];

/**
 * The IANA IPv4 Special-Purpose Address Registry's blocks that are not globally reachable,
 * plus multicast and everything above it, as `[address as a 32-bit number, prefix length]`.
 */
const V4_BLOCKS: readonly [number, number][] = [
  [0x00000000, 8], // "this network" (0/8)
  [0x0a000000, 8], // private (10/8)
  [0x64400000, 10], // shared address space, carrier-grade NAT (100.64/10)
  [0x7f000000, 8], // loopback (127/8)
  [0xa9fe0000, 16], // link-local, cloud metadata (169.254/16)
  [0xac100000, 12], // private (172.16/12)
  [0xc0000000, 24], // IETF protocol assignments (192.0.0/24)
  [0xc0000200, 24], // documentation TEST-NET-1 (192.0.2/24)
  [0xc0586300, 24], // deprecated 6to4 relay anycast (192.88.99/24)
  [0xc0a80000, 16], // private (192.168/16)
  [0xc6120000, 15], // benchmarking (198.18/15)
  [0xc6336400, 24], // documentation TEST-NET-2 (198.51.100/24)
  [0xcb007100, 24], // documentation TEST-NET-3 (203.0.113/24)
  [0xe0000000, 3], // multicast (224/4), reserved (240/4) and broadcast
];

/** @returns whether the IPv4 address (as a 32-bit number) is globally reachable */
function globalV4(address: number): boolean {
  return !V4_BLOCKS.some(([block, prefix]) => (address >>> (32 - prefix)) === (block >>> (32 - prefix)));
}

/**
 * @returns whether the IPv6 address (eight 16-bit groups) is globally reachable: global unicast
 *   (2000::/3) outside the registry's special blocks, or a NAT64, 6to4 or IPv4-mapped form of a
 *   globally reachable IPv4 address. Everything else is refused: loopback, unspecified,
 *   IPv4-compatible (::/96), discard (100::/64), unique-local, link-local, site-local, multicast, SRv6.
 */
function globalV6(g: number[]): boolean {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g;
  const embedded = (hi: number, lo: number) => globalV4(((hi << 16) | lo) >>> 0);
  // IPv4-mapped (::ffff:0:0/96): the runtime connects to the IPv4 address inside.
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0xffff) return embedded(h, i);
  // NAT64 well-known prefix (64:ff9b::/96): translated to the IPv4 address inside.
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return embedded(h, i);
  if ((a & 0xe000) !== 0x2000) return false; // outside global unicast 2000::/3
  // 6to4 (2002::/16): the IPv4 address is in bits 16-47.
  if (a === 0x2002) return embedded(b, c);
  if (a === 0x2001 && b < 0x200) return false; // IETF protocol assignments (2001::/23), Teredo (2001::/32) included
  if (a === 0x2001 && b === 0x0db8) return false; // documentation (2001:db8::/32)
  if ((a & 0xfff0) === 0x3ff0) return false; // documentation (3fff::/20)
  return true;
}

/** @returns the IPv4 address as a 32-bit number, or `undefined` when `host` is not dotted decimal */
function ipv4(host: string): number | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const bytes = parts.map(Number);
  if (!bytes.every((b) => b <= 255)) return undefined;
  return bytes.reduce((sum, byte) => sum * 256 + byte, 0);
}

/** @returns the eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part allowed), or `undefined` */
function ipv6(host: string): number[] | undefined {
  let text = host.replace(/%.*$/, "");
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4(dotted[2] as string);
    if (v4 === undefined) return undefined;
    text = `${dotted[1]}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part ? part.split(":") : []);
  const head = parse(halves[0] as string);
  const tail = halves.length === 2 ? parse(halves[1] as string) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.map((group) => Number.parseInt(group, 16));
}

/**
 * The default URL policy: `https:` to a globally reachable host; in local development also
 * `http:` and private, loopback or otherwise special hosts.
 * @returns `undefined` when allowed, else why not
 */
export function defaultUrlRefusal(url: URL, local: boolean): string | undefined {
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${url.protocol} URLs are not allowed`;
  if (local) return undefined;
  if (url.protocol !== "https:") return "only https URLs are allowed outside local development";
  if (isPrivateHost(url.hostname)) return "private and loopback addresses are not allowed outside local development, nor any other address that is not globally reachable";
  return undefined;
}
