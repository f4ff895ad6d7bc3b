import { type EgressPolicy, isAddressAllowed, isPortAllowed } from "./address-policy.ts";

/** Why a target is refused: `rule` is stable (clients and tests match on it). */
export type Refusal = { rule: string; message: string };

// localhost (RFC 6761), mDNS, ICANN's private-use TLD, home networks, and the special-use
// names that never resolve on the public internet.
const LOCAL_SUFFIXES = ["localhost", "local", "internal", "home.arpa", "test", "invalid", "onion"];

// WHATWG URL serialises every IPv4 form (2130706433, 0177.0.0.1, 0x7f.1, 127.1) as a dotted quad.
const IPV4_HOST = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The host as dialled: brackets off an IPv6 literal, one trailing root dot off a name. */
export function bareHost(url: URL): string {
  const host = url.hostname;
  if (host.startsWith("[") && host.endsWith("]")) return host.slice(1, -1);
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

export function effectivePort(url: URL): number {
  return url.port === "" ? 443 : Number(url.port);
}

/**
 * The rules every target obeys, both when an endpoint URL is stored and on every request:
 * https only, no userinfo, an allowed port, and a host that is either a global IP literal
 * or a public-looking DNS name. Addresses behind a name are checked at dial time.
 */
export function refuseTarget(url: URL, policy: EgressPolicy): Refusal | undefined {
  if (url.protocol !== "https:") return { rule: "scheme", message: "only https is allowed" };
  if (url.username !== "" || url.password !== "") {
    return { rule: "userinfo", message: "credentials in the URL are not allowed" };
  }
  const port = effectivePort(url);
  if (!isPortAllowed(port, policy)) return { rule: "port", message: `port ${port} is not allowed` };
  return refuseHost(url, policy);
}

function refuseHost(url: URL, policy: EgressPolicy): Refusal | undefined {
  const host = bareHost(url);
  if (url.hostname.startsWith("[") || IPV4_HOST.test(host)) {
    if (isAddressAllowed(host, policy)) return undefined;
    return { rule: "host_ip_not_global", message: `address ${host} is not a global unicast address` };
  }
  const labels = host.split(".");
  if (host.length > 253 || !labels.every((label) => LABEL.test(label))) {
    return { rule: "host_invalid", message: "host is not a valid DNS name" };
  }
  if (labels.length < 2) return { rule: "host_local_name", message: "single-label host names are local" };
  if (LOCAL_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`))) {
    return { rule: "host_local_name", message: `${host} is a local name` };
  }
  return undefined;
}
