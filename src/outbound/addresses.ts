/**
 * Which IP addresses an outbound request of the suite may reach. Every host is resolved and each
 * of its addresses classified here: only `public` ones are reachable unless the operator's
 * allow-list (SUITE_OUTBOUND_ALLOW) names the range or the host. Addresses are kept as bigints
 * (32 bits for IPv4, 128 for IPv6) so that ranges are one shift and compare.
 */

export type AddressClass = "public" | "loopback" | "private" | "link_local" | "cgnat" | "multicast" | "unspecified" | "reserved";

export interface Ip {
  family: 4 | 6;
  value: bigint;
}

interface Range {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

const v4 = (text: string, bits: number): Range => ({ family: 4, base: parseIPv4Loose(text)!, bits });
const v6 = (text: string, bits: number): Range => ({ family: 6, base: parseIPv6(text)!, bits });

function inRange(ip: Ip, r: Range): boolean {
  if (ip.family !== r.family) return false;
  const width = ip.family === 4 ? 32 : 128;
  const shift = BigInt(width - r.bits);
  return ip.value >> shift === r.base >> shift;
}

/** Refused ranges, most specific first. IPv6 forms that carry an IPv4 address are unwrapped before. */
const REFUSED: Array<[Range, AddressClass]> = [
  [v4("0.0.0.0", 8), "unspecified"],
  [v4("127.0.0.0", 8), "loopback"],
  [v4("10.0.0.0", 8), "private"],
  [v4("172.16.0.0", 12), "private"],
  [v4("192.168.0.0", 16), "private"],
  [v4("169.254.0.0", 16), "link_local"],
  [v4("100.64.0.0", 10), "cgnat"],
  [v4("224.0.0.0", 4), "multicast"],
  // The future-use block and the broadcast address; IETF protocol assignments; benchmarking and documentation nets.
  [v4("240.0.0.0", 4), "reserved"],
  [v4("192.0.0.0", 24), "reserved"],
  [v4("192.0.2.0", 24), "reserved"],
  [v4("198.18.0.0", 15), "reserved"],
  [v4("198.51.100.0", 24), "reserved"],
  [v4("203.0.113.0", 24), "reserved"],
  [v6("::", 128), "unspecified"],
  [v6("::1", 128), "loopback"],
  [v6("fc00::", 7), "private"],
  // Site-local (deprecated, still routed inside some networks).
  [v6("fec0::", 10), "private"],
  [v6("fe80::", 10), "link_local"],
  [v6("ff00::", 8), "multicast"],
  // Documentation, discard-only, Teredo (its embedded server and client can be anything), local-use NAT64.
  [v6("2001:db8::", 32), "reserved"],
  [v6("100::", 64), "reserved"],
  [v6("2001::", 32), "reserved"],
  [v6("64:ff9b:1::", 48), "reserved"],
];

const MAPPED = v6("::ffff:0:0", 96);
const COMPATIBLE = v6("::", 96);
const NAT64 = v6("64:ff9b::", 96);
const SIX_TO_FOUR = v6("2002::", 16);

/** The IPv4 address an IPv6 one stands for (mapped, compatible, NAT64, 6to4), else null. */
export function embeddedIPv4(ip: Ip): Ip | null {
  if (ip.family !== 6) return null;
  if (inRange(ip, MAPPED) || inRange(ip, NAT64) || (inRange(ip, COMPATIBLE) && ip.value > 1n)) return { family: 4, value: ip.value & 0xffffffffn };
  if (inRange(ip, SIX_TO_FOUR)) return { family: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return null;
}

export function classify(ip: Ip): AddressClass {
  const inner = embeddedIPv4(ip);
  if (inner) return classify(inner);
  for (const [range, kind] of REFUSED) if (inRange(ip, range)) return kind;
  return "public";
}

/**
 * An IPv4 address as inet_aton (and so the system resolver, curl and browsers of old) reads it:
 * 1 to 4 parts, each decimal, octal (leading 0) or hex (0x), the last filling the remaining
 * bytes: `2130706433`, `0177.1`, `0x7f.0.0.1`, `127.1` are all 127.0.0.1. Null if it is not one.
 */
export function parseIPv4Loose(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length > 4) return null;
  const nums: bigint[] = [];
  for (const p of parts) {
    let n: bigint;
    if (/^0x[0-9a-f]*$/i.test(p)) n = p.length === 2 ? 0n : BigInt(p);
    else if (/^0[0-7]*$/.test(p)) n = p.length === 1 ? 0n : BigInt(`0o${p.slice(1)}`);
    else if (/^[1-9][0-9]*$/.test(p)) n = BigInt(p);
    else return null;
    nums.push(n);
  }
  const last = nums.pop()!;
  let value = 0n;
  for (const n of nums) {
    if (n > 255n) return null;
    value = (value << 8n) | n;
  }
  const restBits = BigInt(8 * (4 - nums.length));
  if (last >= 1n << restBits) return null;
  return (value << restBits) | last;
}

/** An IPv6 address (with `::`, a dotted IPv4 tail, a `%zone` ignored), or null. */
export function parseIPv6(text: string): bigint | null {
  const t = text.replace(/%.*$/, "");
  if (!/^[0-9a-f:.]+$/i.test(t) || !t.includes(":")) return null;
  const halves = t.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string): bigint[] | null => {
    if (s === "") return [];
    const out: bigint[] = [];
    const items = s.split(":");
    for (let i = 0; i < items.length; i++) {
      const g = items[i]!;
      if (i === items.length - 1 && g.includes(".")) {
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(g)) return null;
        const four = g.split(".").map(Number);
        if (four.some((n) => n > 255)) return null;
        out.push(BigInt((four[0]! << 8) | four[1]!), BigInt((four[2]! << 8) | four[3]!));
      } else if (/^[0-9a-f]{1,4}$/i.test(g)) out.push(BigInt(`0x${g}`));
      else return null;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  let value = 0n;
  for (const g of [...head, ...new Array<bigint>(missing).fill(0n), ...tail]) value = (value << 16n) | g;
  return value;
}

/** A host as written in a URL or a setting (IPv6 in brackets or not; any IPv4 spelling), or null for a name. */
export function parseIp(host: string): Ip | null {
  const h = host.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  const four = parseIPv4Loose(h);
  if (four !== null) return { family: 4, value: four };
  const six = parseIPv6(h);
  return six === null ? null : { family: 6, value: six };
}

/** The operator's exceptions: address ranges and host names an outbound request may reach anyway. */
export interface AllowList {
  ranges: Range[];
  /** Lower case, without a trailing dot. */
  names: Set<string>;
}

export const EMPTY_ALLOW_LIST: AllowList = { ranges: [], names: new Set() };

const NAME_RE = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)*$/;

/**
 * `10.0.0.0/8, fd00::/8, 192.168.1.20, idp.corp.example`: CIDRs (a bare address is one host) and
 * host names (exact). Throws an Error naming the first entry that is neither.
 */
export function parseAllowList(raw: string): AllowList {
  const list: AllowList = { ranges: [], names: new Set() };
  for (const entry of raw.split(",").map((s) => s.trim().toLowerCase()).filter((s) => s !== "")) {
    const [addr, prefix, extra] = entry.split("/");
    const ip = parseIp(addr!);
    if (ip) {
      const width = ip.family === 4 ? 32 : 128;
      const bits = prefix === undefined ? width : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
      if (extra !== undefined || !(bits >= 0 && bits <= width)) throw new Error(`${JSON.stringify(entry)} is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
      list.ranges.push({ family: ip.family, base: ip.value, bits });
    } else if (prefix === undefined && NAME_RE.test(entry.replace(/\.$/, ""))) {
      list.names.add(entry.replace(/\.$/, ""));
    } else {
      throw new Error(`${JSON.stringify(entry)} is neither a CIDR such as 10.0.0.0/8 nor a host name`);
    }
  }
  return list;
}

/** Whether the allow-list's ranges hold this address (or the IPv4 address it carries). */
export function allowedRange(list: AllowList, ip: Ip): boolean {
  const inner = embeddedIPv4(ip);
  return list.ranges.some((r) => inRange(ip, r) || (inner !== null && inRange(inner, r)));
}

/** An address as a URL host: IPv4 dotted, IPv6 in brackets. */
export function urlHost(ip: Ip): string {
  if (ip.family === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 255n)).join(".");
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((ip.value >> s) & 0xffffn).toString(16));
  return `[${groups.join(":")}]`;
}
