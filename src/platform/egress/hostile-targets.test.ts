// The production (strict) policy against a corpus of hostile targets, at both gates:
// validateEndpointUrl (connection create/update) and the egress fetch (every request).
import { afterAll, describe, expect, test } from "vitest";
import { AppError } from "../../errors.ts";
import { strictEgressPolicy } from "./address-policy.ts";
import { createEgress, type Resolve } from "./egress-fetch.ts";
import { validateEndpointUrl } from "./endpoint-url.ts";

type Case = { raw: string; rule: string; atFetch: string | null };
// `atFetch`: the rule the egress fetch answers with; null where only stored URLs are held to
// it (query, fragment, raw-string tricks the WHATWG parser repairs before a request exists).
const both = (raw: string, rule: string): Case => ({ raw, rule, atFetch: rule });
const storedOnly = (raw: string, rule: string): Case => ({ raw, rule, atFetch: null });

const ip = (raw: string) => both(raw, "host_ip_not_global");
const local = (raw: string) => both(raw, "host_local_name");

const urlCorpus: Case[] = [
  // Every IPv4 spelling the WHATWG parser normalises to loopback.
  ip("https://2130706433/"),
  ip("https://0177.0.0.1/"),
  ip("https://0x7f.1/"),
  ip("https://127.1/"),
  ip("https://0x7f000001/"),
  ip("https://017700000001/"),
  ip("https://127.0.0.1/"),
  ip("https://127.0.0.1./"),
  ip("https://127%2e0.0.1/"),
  ip("https://１２７.０.０.１/"),
  ip("https://127。0。0。1/"),
  // Special-purpose IPv4.
  ip("https://0/"),
  ip("https://0.0.0.0/"),
  ip("https://10.0.0.1/"),
  ip("https://172.16.0.1/"),
  ip("https://192.168.0.1/"),
  ip("https://100.64.0.1/"),
  ip("https://169.254.169.254/latest/meta-data/"),
  ip("https://0xa9.0xfe.0xa9.0xfe/"),
  ip("https://198.18.0.1/"),
  ip("https://240.0.0.1/"),
  ip("https://255.255.255.255/"),
  ip("https://224.0.0.1/"),
  ip("https://192.0.2.1/"),
  ip("https://203.0.113.1/"),
  // IPv6 and IPv4-in-IPv6.
  ip("https://[::1]/"),
  ip("https://[0:0:0:0:0:0:0:1]/"),
  ip("https://[::]/"),
  ip("https://[fc00::1]/"),
  ip("https://[fd00:ec2::254]/"),
  ip("https://[fe80::1]/"),
  ip("https://[fec0::1]/"),
  ip("https://[ff02::1]/"),
  ip("https://[::ffff:127.0.0.1]/"),
  ip("https://[::ffff:7f00:1]/"),
  ip("https://[::ffff:169.254.169.254]/"),
  ip("https://[::ffff:10.0.0.1]/"),
  ip("https://[::127.0.0.1]/"),
  ip("https://[64:ff9b::127.0.0.1]/"),
  ip("https://[64:ff9b::10.0.0.1]/"),
  ip("https://[64:ff9b::169.254.169.254]/"),
  ip("https://[64:ff9b:1::808:808]/"),
  ip("https://[2002:7f00:1::1]/"),
  ip("https://[2002:a9fe:a9fe::1]/"),
  ip("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/"),
  ip("https://[2001:db8::1]/"),
  // Scheme and port.
  both("http://mcp.example.com/", "scheme"),
  both("http://127.0.0.1/", "scheme"),
  both("ftp://mcp.example.com/", "scheme"),
  both("wss://mcp.example.com/", "scheme"),
  both("https://mcp.example.com:8443/", "port"),
  both("https://mcp.example.com:80/", "port"),
  both("https://mcp.example.com:22/", "port"),
  // Userinfo tricks.
  both("https://user:pass@mcp.example.com/", "userinfo"),
  both("https://evil.example.com@mcp.example.com/", "userinfo"),
  both("https://a%40b@mcp.example.com/", "userinfo"),
  storedOnly("https://:@mcp.example.com/", "userinfo"),
  storedOnly("https://@mcp.example.com/", "userinfo"),
  storedOnly("https://mcp.example.com%40evil.example.com/", "syntax"),
  // Local names.
  local("https://localhost/"),
  local("https://LOCALHOST./"),
  local("https://api.localhost/"),
  local("https://ⓛocalhost/"),
  local("https://%6c%6f%63%61%6c%68%6f%73%74/"),
  local("https://printer.local/"),
  local("https://metadata.google.internal/"),
  local("https://router.home.arpa/"),
  local("https://intranet/"),
  local("https://mcp.test/"),
  both("https://exa_mple.com/", "host_invalid"),
  // Query and fragment, even empty.
  storedOnly("https://mcp.example.com/mcp?", "query"),
  storedOnly("https://mcp.example.com/mcp?token=x", "query"),
  storedOnly("https://mcp.example.com/mcp#", "fragment"),
  storedOnly("https://mcp.example.com/mcp#x", "fragment"),
  storedOnly("https://mcp.example.com?@127.0.0.1/", "query"),
  // Raw-string tricks refused before parsing.
  storedOnly("https://mcp.example.com\\@127.0.0.1/", "characters"),
  storedOnly(" https://mcp.example.com/", "characters"),
  storedOnly("https://mcp.exa\tmple.com/", "characters"),
  storedOnly("https://mcp.example.com/\n", "characters"),
  storedOnly("https://mcp.exam\u200bple.com/", "characters"),
  storedOnly("https:mcp.example.com/", "scheme"),
  storedOnly("https:///mcp.example.com/", "syntax"),
  storedOnly(`https://mcp.example.com/${"a".repeat(2048)}`, "too_long"),
];

// Names that pass the URL rules and are refused when dialled, by what they resolve to.
const resolving: Record<string, string[]> = {
  "loopback.example.com": ["127.0.0.1"],
  "loopback2.example.com": ["127.3.4.5"],
  "private.example.com": ["10.1.2.3"],
  "home.example.com": ["192.168.1.20"],
  "metadata.example.com": ["169.254.169.254"],
  "cgnat.example.com": ["100.64.1.1"],
  "zero.example.com": ["0.0.0.0"],
  "v6loop.example.com": ["::1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "ula.example.com": ["fd00::1"],
  "linklocal.example.com": ["fe80::1"],
  "nat64.example.com": ["64:ff9b::a00:1"],
  "mixed.example.com": ["93.184.215.14", "192.168.0.10"],
  "mixed6.example.com": ["2606:4700::1", "::1"],
};

describe("strict policy: hostile endpoint URLs", () => {
  test("the corpus is large enough to mean something", () => {
    expect(urlCorpus.length + Object.keys(resolving).length + 1).toBeGreaterThanOrEqual(50);
  });

  test.each(urlCorpus)("validateEndpointUrl refuses $raw ($rule)", ({ raw, rule }) => {
    let refused: unknown;
    try {
      validateEndpointUrl(raw);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "invalid_endpoint_url", details: { rule } });
  });

  test.each(Object.keys(resolving))(
    "validateEndpointUrl accepts the name %s (its addresses are checked at dial time)",
    (name) => {
      expect(validateEndpointUrl(`https://${name}/mcp`).origin).toBe(`https://${name}`);
    },
  );
});

describe("strict policy: the egress fetch refuses before dialling", () => {
  const lookups: string[] = [];
  const publicThenPrivate = new Map<string, number>();
  const resolve: Resolve = async (hostname) => {
    lookups.push(hostname);
    if (hostname === "rebind.example.com") {
      const calls = (publicThenPrivate.get(hostname) ?? 0) + 1;
      publicThenPrivate.set(hostname, calls);
      return [{ address: calls === 1 ? "93.184.215.14" : "127.0.0.1", family: 4 }];
    }
    const addresses = resolving[hostname] ?? [];
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  const egress = createEgress(strictEgressPolicy(), { resolve });
  afterAll(() => egress.close());

  const atFetch = urlCorpus.flatMap((c) => (c.atFetch ? [{ raw: c.raw, rule: c.atFetch }] : []));

  test.each(atFetch)("refuses $raw ($rule) without resolving anything", async ({ raw, rule }) => {
    const before = lookups.length;
    await expect(egress.fetch(raw)).rejects.toMatchObject({ code: "egress_blocked", details: { rule } });
    expect(lookups.length).toBe(before);
  });

  test.each(Object.keys(resolving))("refuses %s by the address it resolves to", async (name) => {
    await expect(egress.fetch(`https://${name}/mcp`, { method: "POST", body: "{}" })).rejects.toMatchObject({
      code: "egress_blocked",
      details: { rule: "address_not_global" },
    });
    expect(lookups).toContain(name);
  });

  test("a name that resolved public earlier and private at dial time is refused", async () => {
    // The earlier answer (e.g. a check at validation time) is not trusted: the dial resolves again.
    expect((await resolve("rebind.example.com"))[0]?.address).toBe("93.184.215.14");
    await expect(egress.fetch("https://rebind.example.com/mcp")).rejects.toMatchObject({
      code: "egress_blocked",
      details: { rule: "address_not_global" },
    });
    expect(publicThenPrivate.get("rebind.example.com")).toBe(2);
  });
});
