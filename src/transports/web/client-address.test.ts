import { describe, expect, test } from "vitest";
import { resolveClientAddress } from "./client-address.ts";

const proxies = ["10.0.0.0/8", "fd00::/8"];
const resolve = (peer: string | undefined, forwardedFor?: string, trustedProxies = proxies) =>
  resolveClientAddress({ peer, forwardedFor, trustedProxies });

describe("client address", () => {
  test("with no trusted proxies (the default) X-Forwarded-For is never read", () => {
    expect(resolve("10.0.0.1", "198.51.100.7", [])).toBe("10.0.0.1");
    expect(resolve("203.0.113.5", undefined, [])).toBe("203.0.113.5");
  });

  test("a spoofed X-Forwarded-For from an untrusted peer is ignored", () => {
    expect(resolve("203.0.113.5", "10.0.0.1")).toBe("203.0.113.5");
    expect(resolve("203.0.113.5", "198.51.100.7, 10.0.0.2")).toBe("203.0.113.5");
  });

  test("from a trusted proxy, the entry it appended is the client", () => {
    expect(resolve("10.0.0.1", "198.51.100.7")).toBe("198.51.100.7");
    expect(resolve("10.0.0.1", undefined)).toBe("10.0.0.1");
  });

  test("a chain of trusted proxies is walked from the right to the first untrusted entry", () => {
    expect(resolve("10.0.0.1", "198.51.100.7, 10.0.0.3, 10.0.0.2")).toBe("198.51.100.7");
    // Whatever the client wrote before its real address is ignored.
    expect(resolve("10.0.0.1", "10.9.9.9, 192.0.2.1, 198.51.100.7, 10.0.0.2")).toBe("198.51.100.7");
    // All trusted: the furthest hop is the client (an internal caller).
    expect(resolve("10.0.0.1", "10.0.0.3, 10.0.0.2")).toBe("10.0.0.3");
  });

  test("IPv6 proxies and clients; IPv4-mapped peers count as IPv4", () => {
    expect(resolve("fd00::1", "2001:DB8:0:0::1")).toBe("2001:db8::1");
    expect(resolve("::ffff:10.0.0.1", "198.51.100.7")).toBe("198.51.100.7");
    expect(resolve("::ffff:203.0.113.5", "198.51.100.7")).toBe("203.0.113.5");
    expect(resolve("10.0.0.1", "[2001:db8::5]:443, 10.0.0.2:8080")).toBe("2001:db8::5");
    expect(resolve("10.0.0.1", "198.51.100.7:51234")).toBe("198.51.100.7");
  });

  test("garbage in the chain stops the walk at the last proxy that vouched for its neighbour", () => {
    for (const garbage of [
      "",
      " ",
      ",",
      "unknown",
      "1.2.3.4.5",
      "0x7f.0.0.1",
      "127.1",
      "fe80::1%eth0",
      "x".repeat(500),
    ]) {
      expect(resolve("10.0.0.1", garbage), garbage).toBe("10.0.0.1");
      expect(resolve("10.0.0.1", `198.51.100.7, ${garbage}, 10.0.0.2`), garbage).toBe("10.0.0.2");
    }
    expect(resolve("10.0.0.1", "garbage, 198.51.100.7")).toBe("198.51.100.7");
  });

  test("no socket (in-process requests) is unknown, whatever the header says", () => {
    expect(resolve(undefined, "198.51.100.7")).toBe("unknown");
  });
});
