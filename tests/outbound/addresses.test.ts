import { describe, expect, test } from "bun:test";
import { type AddressClass, allowedRange, classify, parseAllowList, parseIp, urlHost } from "../../src/outbound/addresses";
import { createOutboundGuard, OutboundError, type OutboundPurpose } from "../../src/outbound/guard";

const kind = (host: string): AddressClass => {
  const ip = parseIp(host);
  if (!ip) throw new Error(`not an address: ${host}`);
  return classify(ip);
};

describe("the address classifier", () => {
  const cases: Array<[string, AddressClass]> = [
    // Each refused range, at its edges.
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.0", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["192.168.255.255", "private"],
    ["fc00::1", "private"],
    ["fd12:3456:789a::1", "private"],
    ["169.254.169.254", "link_local"],
    ["169.254.0.1", "link_local"],
    ["fe80::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["febf:ffff::1", "link_local"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["255.255.255.255", "reserved"],
    ["240.0.0.1", "reserved"],
    ["192.0.2.10", "reserved"],
    ["198.18.0.1", "reserved"],
    ["2001:db8::1", "reserved"],
    // IPv6 forms that carry an IPv4 address: classified by that address.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["[::ffff:10.1.2.3]", "private"],
    ["::ffff:169.254.169.254", "link_local"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "link_local"],
    ["2002:c0a8:0101::1", "private"],
    // Odd IPv4 spellings as the system resolver reads them: decimal, octal, hex, short forms.
    ["2130706433", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["0x7f.0.0.1", "loopback"],
    ["0x7f000001", "loopback"],
    ["017700000001", "loopback"],
    ["127.1", "loopback"],
    ["127.0.1", "loopback"],
    ["0", "unspecified"],
    ["0x0", "unspecified"],
    ["167772161", "private"],
    ["012.1", "private"],
    ["0xa9.0xfe.0xa9.0xfe", "link_local"],
    ["2852039166", "link_local"],
    ["192.168.1", "private"],
    ["127.0.0.1.", "loopback"],
    // Public ones, including neighbours of the refused ranges.
    ["93.184.216.34", "public"],
    ["8.8.8.8", "public"],
    ["172.32.0.1", "public"],
    ["172.15.255.255", "public"],
    ["100.128.0.1", "public"],
    ["11.0.0.1", "public"],
    ["2606:4700::1111", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["1.1", "public"],
  ];
  for (const [host, expected] of cases) {
    test(`${host} is ${expected}`, () => expect(kind(host)).toBe(expected));
  }

  test("names and malformed spellings are not addresses (they go to the resolver)", () => {
    for (const host of ["idp.example.com", "localhost", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "0x1g", "09.1.1.1", "1::2::3", "12345::", "1.2.3.4:80", ""]) {
      expect(parseIp(host)).toBeNull();
    }
  });

  test("addresses print as URL hosts", () => {
    expect(urlHost(parseIp("0x7f.1")!)).toBe("127.0.0.1");
    expect(urlHost(parseIp("::1")!)).toBe("[0:0:0:0:0:0:0:1]");
    expect(new URL(`http://${urlHost(parseIp("fe80::1")!)}/`).hostname).toBe("[fe80::1]");
  });
});

describe("SUITE_OUTBOUND_ALLOW", () => {
  test("CIDRs (a bare address is one host) and host names", () => {
    const list = parseAllowList(" 10.20.0.0/16 , fd00::/8,192.168.1.20, IdP.Corp.Example., 169.254.169.254/32 ");
    expect(allowedRange(list, parseIp("10.20.3.4")!)).toBe(true);
    expect(allowedRange(list, parseIp("10.21.0.1")!)).toBe(false);
    expect(allowedRange(list, parseIp("::ffff:10.20.0.9")!)).toBe(true);
    expect(allowedRange(list, parseIp("fd00::5")!)).toBe(true);
    expect(allowedRange(list, parseIp("fc00::5")!)).toBe(false);
    expect(allowedRange(list, parseIp("192.168.1.20")!)).toBe(true);
    expect(allowedRange(list, parseIp("192.168.1.21")!)).toBe(false);
    expect(allowedRange(list, parseIp("169.254.169.254")!)).toBe(true);
    expect([...list.names]).toEqual(["idp.corp.example"]);
    expect(parseAllowList("").ranges).toEqual([]);
  });

  test("a bad entry is named", () => {
    expect(() => parseAllowList("10.0.0.0/33")).toThrow('"10.0.0.0/33"');
    expect(() => parseAllowList("10.0.0.0/8/1")).toThrow("10.0.0.0/8/1");
    expect(() => parseAllowList("fd00::/129")).toThrow("fd00::/129");
    expect(() => parseAllowList("idp.example.com/24")).toThrow("idp.example.com/24");
    expect(() => parseAllowList("http://idp")).toThrow("http://idp");
  });
});

describe("the guard's decision (no connection made)", () => {
  // A resolver of our own: names answer what a test says (nothing leaves the machine).
  const dns: Record<string, string[]> = {
    "public.test": ["93.184.216.34"],
    "inside.test": ["10.0.0.7"],
    "mixed.test": ["93.184.216.34", "192.168.0.5"],
    "meta.test": ["::ffff:169.254.169.254"],
    "loop.test": ["127.0.0.1", "::1"],
    "idp.corp.example": ["10.9.9.9"],
  };
  const resolve = async (host: string) => {
    const a = dns[host];
    if (!a) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return a;
  };
  const guard = (allow = "", loopbackFor: OutboundPurpose[] = []) => createOutboundGuard({ allow: parseAllowList(allow), loopbackFor: new Set(loopbackFor), resolve });
  const reasonOf = async (p: Promise<unknown>) => {
    try {
      await p;
      return "allowed";
    } catch (e) {
      return e instanceof OutboundError ? e.reason : `unexpected ${String(e)}`;
    }
  };
  const idp = "identity_provider" as const;

  test("every refused spelling in a URL, and names resolving to refused addresses", async () => {
    const g = guard();
    for (const url of [
      "https://127.0.0.1/",
      "https://2130706433/",
      "https://0x7f000001/",
      "https://0177.0.0.1/",
      "https://127.1/",
      "https://0.0.0.0/",
      "https://0/",
      "https://[::]/",
      "https://[::1]:8443/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:a9fe:a9fe]/",
      "https://169.254.169.254/latest/meta-data/",
      "https://100.64.1.1/",
      "https://[fd00::1]/",
      "https://[fe80::1]/",
      "https://224.0.0.1/",
      "https://inside.test/",
      "https://mixed.test/",
      "https://meta.test/",
      "https://loop.test/",
      "https://INSIDE.test./",
    ]) {
      expect(`${url} ${await reasonOf(g.check(url, idp))}`).toBe(`${url} refused_address`);
    }
    expect(await reasonOf(g.check("https://public.test/", idp))).toBe("allowed");
    expect(await reasonOf(g.check("https://93.184.216.34/", idp))).toBe("allowed");
    expect(await reasonOf(g.check("https://nowhere.test/", idp))).toBe("unreachable");
    expect(await reasonOf(g.check("ftp://public.test/", idp))).toBe("bad_url");
    expect(await reasonOf(g.check("https://user:pw@public.test/", idp))).toBe("bad_url");
  });

  test("the allow-list by CIDR and by name; the loopback switch for one purpose only", async () => {
    expect(await reasonOf(guard("10.0.0.0/24").check("https://inside.test/", idp))).toBe("allowed");
    expect(await reasonOf(guard("10.0.1.0/24").check("https://inside.test/", idp))).toBe("refused_address");
    expect(await reasonOf(guard("169.254.169.254").check("https://meta.test/", idp))).toBe("allowed");
    expect(await reasonOf(guard("idp.corp.example").check("https://idp.corp.example/", idp))).toBe("allowed");
    // A name on the list does not open its address to other names.
    expect(await reasonOf(guard("idp.corp.example").check("https://10.9.9.9/", idp))).toBe("refused_address");
    expect(await reasonOf(guard("192.168.0.0/16").check("https://mixed.test/", idp))).toBe("allowed");
    const tests = guard("", ["identity_provider"]);
    expect(await reasonOf(tests.check("https://loop.test/", idp))).toBe("allowed");
    expect(await reasonOf(tests.check("http://127.0.0.1:9/", idp))).toBe("allowed");
    expect(await reasonOf(tests.check("http://127.0.0.1:9/", "webhook"))).toBe("refused_address");
    // Loopback only: private and link-local stay refused under the switch.
    expect(await reasonOf(tests.check("https://inside.test/", idp))).toBe("refused_address");
    expect(await reasonOf(tests.check("https://169.254.169.254/", idp))).toBe("refused_address");
  });
});
