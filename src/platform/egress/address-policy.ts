import { readFileSync } from "node:fs";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../../config-error.ts";

/**
 * What outbound calls may reach. Production uses `strictEgressPolicy()` unchanged; the
 * development/test override only ADDS (CIDRs, ports, a CA) so loopback test servers work.
 */
export type EgressPolicy = {
  /** Addresses allowed even though they are not global unicast (dev/test only). */
  allowCidrs: string[];
  /** Destination ports allowed; 443 is always part of it. */
  allowPorts: number[];
  /** PEM added to the default trust roots (dev/test only). */
  extraCa?: string | undefined;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  maxResponseBytes: number;
};

/** The production policy: no exceptions, https on 443 to global unicast addresses only. */
export function strictEgressPolicy(): EgressPolicy {
  return {
    allowCidrs: [],
    allowPorts: [443],
    connectTimeoutMs: 10_000,
    headersTimeoutMs: 30_000,
    // Idle time between body chunks, not total time.
    bodyTimeoutMs: 30_000,
    // The largest single remote answer DESIGN §5 accepts (one tools/list page ≤ 8 MiB).
    maxResponseBytes: 8 * 1024 * 1024,
  };
}

const OVERRIDES = ["PATCHBAY_EGRESS_ALLOW_CIDRS", "PATCHBAY_EGRESS_ALLOW_PORTS", "PATCHBAY_EGRESS_CA_FILE"];

/**
 * Strict policy plus the development/test override. Any override under
 * NODE_ENV=production throws an Error naming the variable (the config loader exits 78).
 */
export function egressPolicyFromEnv(
  env: Record<string, string | undefined>,
  nodeEnv: string | undefined,
): EgressPolicy {
  const policy = strictEgressPolicy();
  const value = (name: string) => env[name]?.trim() || undefined;
  if (nodeEnv === "production") {
    const set = OVERRIDES.find((name) => value(name) !== undefined);
    if (set)
      throw new ConfigError(set, "is a development/test override and is refused when NODE_ENV=production");
    return policy;
  }
  const cidrs = list(value("PATCHBAY_EGRESS_ALLOW_CIDRS"));
  for (const cidr of cidrs) {
    if (!ipaddr.isValidCIDR(cidr))
      throw new ConfigError("PATCHBAY_EGRESS_ALLOW_CIDRS", `"${cidr}" is not a CIDR`);
  }
  const ports = list(value("PATCHBAY_EGRESS_ALLOW_PORTS")).map((raw) => {
    const port = Number(raw);
    if (!/^\d{1,5}$/.test(raw) || port < 1 || port > 65_535) {
      throw new ConfigError("PATCHBAY_EGRESS_ALLOW_PORTS", `"${raw}" is not a port`);
    }
    return port;
  });
  const caFile = value("PATCHBAY_EGRESS_CA_FILE");
  let extraCa: string | undefined;
  if (caFile) {
    try {
      extraCa = readFileSync(caFile, "utf8");
    } catch {
      throw new ConfigError("PATCHBAY_EGRESS_CA_FILE", `cannot read ${caFile}`);
    }
    if (!extraCa.includes("-----BEGIN CERTIFICATE-----")) {
      throw new ConfigError("PATCHBAY_EGRESS_CA_FILE", `${caFile} holds no PEM certificate`);
    }
  }
  return {
    ...policy,
    allowCidrs: cidrs,
    allowPorts: [...new Set([...policy.allowPorts, ...ports])],
    extraCa,
  };
}

const list = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const cidrs = (items: string[]) => items.map((cidr) => ipaddr.parseCIDR(cidr));

// Every IANA special-purpose IPv4 block, listed here on top of ipaddr.js's range() so a
// library update that reshuffles its ranges cannot open one of them.
const DENIED_V4 = cidrs([
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4",
]);

// Inside 2000::/3 but not reachable hosts: IETF assignments (Teredo, benchmarking, ORCHID),
// documentation, 6to4 (deprecated by RFC 7526) and the retired 6bone.
const DENIED_V6 = cidrs(["2001::/23", "2001:db8::/32", "2002::/16", "3ffe::/16", "3fff::/20"]);
const GLOBAL_V6 = ipaddr.parseCIDR("2000::/3");
const NAT64 = ipaddr.parseCIDR("64:ff9b::/96");

const inAny = (addr: Address, ranges: [Address, number][]) =>
  ranges.some((range) => range[0].kind() === addr.kind() && addr.match(range));

/** Parses only what a resolver or a WHATWG URL hands us; anything odd fails closed. */
function parseAddress(addr: string): Address | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(addr)) return ipaddr.IPv4.parse(addr);
  // A zone id ("fe80::1%eth0") means a link-scoped address: never global.
  if (!addr.includes("%") && ipaddr.IPv6.isValid(addr)) return ipaddr.IPv6.parse(addr);
  return undefined;
}

function isGlobalV4(addr: ipaddr.IPv4): boolean {
  return addr.range() === "unicast" && !inAny(addr, DENIED_V4);
}

function isGlobalV6(addr: ipaddr.IPv6): boolean {
  if (addr.isIPv4MappedAddress()) return isGlobalV4(addr.toIPv4Address());
  // DNS64 hosts see public IPv4-only names as 64:ff9b::a.b.c.d: judge the embedded address.
  // (The local-use prefix 64:ff9b:1::/48 is outside 2000::/3 and refused below.)
  if (addr.match(NAT64)) return isGlobalV4(embeddedV4(addr));
  return addr.match(GLOBAL_V6) && addr.range() === "unicast" && !inAny(addr, DENIED_V6);
}

function embeddedV4(addr: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = addr.toByteArray().slice(12);
  return new ipaddr.IPv4(bytes);
}

/**
 * True only for an address the public internet routes to a single host: IPv4 outside
 * every special-purpose block; IPv6 inside 2000::/3 and outside special blocks.
 * IPv4-mapped IPv6 is unwrapped and judged as IPv4; so is a NAT64 (64:ff9b::/96) address.
 */
export function isGlobalUnicast(addr: string): boolean {
  const parsed = parseAddress(addr);
  if (!parsed) return false;
  return parsed instanceof ipaddr.IPv4 ? isGlobalV4(parsed) : isGlobalV6(parsed);
}

/** Global unicast, or inside one of the policy's allowed CIDRs (dev/test override). */
export function isAddressAllowed(addr: string, policy: EgressPolicy): boolean {
  if (isGlobalUnicast(addr)) return true;
  if (policy.allowCidrs.length === 0) return false;
  const parsed = parseAddress(addr);
  if (!parsed) return false;
  const candidates: Address[] = [parsed];
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) candidates.push(parsed.toIPv4Address());
  const allowed = cidrs(policy.allowCidrs);
  return candidates.some((candidate) => inAny(candidate, allowed));
}

export function isPortAllowed(port: number, policy: EgressPolicy): boolean {
  return policy.allowPorts.includes(port);
}
