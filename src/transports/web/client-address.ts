import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The client's address, for the sign-in limits and the OAuth provider: the socket peer, unless
 * the peer is one of the trusted proxies (`PATCHBAY_TRUSTED_PROXIES`, config.ts); then
 * X-Forwarded-For is read as `resolveClientAddress` says.
 */
export function clientAddress(c: Context, trustedProxies: readonly string[]): string {
  let peer: string | undefined;
  try {
    peer = getConnInfo(c).remote.address;
  } catch {
    peer = undefined; // in-process requests (tests) have no socket
  }
  return resolveClientAddress({
    peer,
    forwardedFor: c.req.header("x-forwarded-for"),
    trustedProxies,
  });
}

/**
 * Anyone can write X-Forwarded-For, and a limit keyed by what the client writes limits nothing.
 * So the header is read only when the socket peer is a trusted proxy, and then from the right:
 * each trusted proxy appends the address it was connected from, so the entries are believed
 * right to left for as long as they are trusted proxies, and the first one that is not is the
 * client. Everything left of it was written by the client and is ignored. An entry that is not
 * an address ends the walk at the last proxy that vouched for its neighbour: a broken chain
 * makes its clients share that proxy's address (and its limits) rather than pick their own.
 */
export function resolveClientAddress(args: {
  peer: string | undefined;
  forwardedFor: string | undefined;
  trustedProxies: readonly string[];
}): string {
  const peer = args.peer === undefined ? undefined : parseAddress(args.peer);
  if (!peer) return args.peer ?? "unknown";
  const ranges = args.trustedProxies.map((cidr) => ipaddr.parseCIDR(cidr));
  const trusted = (addr: Address) =>
    ranges.some((range) => range[0].kind() === addr.kind() && addr.match(range));
  let client = peer;
  if (!trusted(peer)) return client.toString();
  const hops = (args.forwardedFor ?? "").split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i] ?? "");
    if (!hop) break;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client.toString();
}

/**
 * An address as a socket or a proxy writes it: dotted IPv4 or IPv6, optionally with a port
 * (`1.2.3.4:5678`, `[2001:db8::1]:443`, as some load balancers add). IPv4-mapped IPv6 (what a
 * dual-stack socket reports for an IPv4 peer) becomes IPv4, so one client has one spelling.
 */
function parseAddress(text: string): Address | undefined {
  let candidate = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(candidate);
  if (bracketed?.[1]) candidate = bracketed[1];
  else if (/^[\d.]+:\d{1,5}$/.test(candidate)) candidate = candidate.slice(0, candidate.lastIndexOf(":"));
  if (ipaddr.IPv4.isValidFourPartDecimal(candidate)) return ipaddr.IPv4.parse(candidate);
  // A zone id ("fe80::1%eth0") names a local interface, never a client on the internet.
  if (candidate.includes("%") || !ipaddr.IPv6.isValid(candidate)) return undefined;
  const v6 = ipaddr.IPv6.parse(candidate);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}
