import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  egressPolicyFromEnv,
  isAddressAllowed,
  isGlobalUnicast,
  strictEgressPolicy,
} from "./address-policy.ts";

describe("isGlobalUnicast", () => {
  test.each([
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.170",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%eth0",
    "fec0::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "::ffff:0:7f00:1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::a00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1::808:808",
    "2002:7f00:1::1",
    "2002:a00:1::1",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "2001:db8::1",
    "2001:2::1",
    "2001:10::1",
    "3fff::1",
    "100::1",
    "5f00::1",
    // Non-canonical text is never what a resolver returns: fail closed.
    "2130706433",
    "0177.0.0.1",
    "0x7f.1",
    "127.1",
    "",
    "example.com",
    "[::1]",
  ])("%s is not global unicast", (addr) => {
    expect(isGlobalUnicast(addr)).toBe(false);
  });

  test.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:81c::200e",
    "::ffff:8.8.8.8",
    // DNS64: an IPv4-only public name seen from an IPv6-only host.
    "64:ff9b::808:808",
  ])("%s is global unicast", (addr) => {
    expect(isGlobalUnicast(addr)).toBe(true);
  });
});

describe("isAddressAllowed", () => {
  test("the strict policy allows only global unicast", () => {
    expect(isAddressAllowed("127.0.0.1", strictEgressPolicy())).toBe(false);
    expect(isAddressAllowed("8.8.8.8", strictEgressPolicy())).toBe(true);
  });

  test("allowed CIDRs add loopback, also in its IPv4-mapped form, and nothing else", () => {
    const policy = { ...strictEgressPolicy(), allowCidrs: ["127.0.0.0/8", "::1/128"] };
    expect(isAddressAllowed("127.0.0.1", policy)).toBe(true);
    expect(isAddressAllowed("127.9.9.9", policy)).toBe(true);
    expect(isAddressAllowed("::1", policy)).toBe(true);
    expect(isAddressAllowed("::ffff:127.0.0.1", policy)).toBe(true);
    expect(isAddressAllowed("10.0.0.1", policy)).toBe(false);
    expect(isAddressAllowed("169.254.169.254", policy)).toBe(false);
    expect(isAddressAllowed("fd00::1", policy)).toBe(false);
    expect(isAddressAllowed("8.8.8.8", policy)).toBe(true);
  });
});

describe("egressPolicyFromEnv", () => {
  const caFile = () => {
    const dir = mkdtempSync(join(tmpdir(), "egress-ca-"));
    const file = join(dir, "ca.pem");
    writeFileSync(file, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    return file;
  };

  test("without overrides it is the strict policy, in every environment", () => {
    expect(egressPolicyFromEnv({}, "production")).toEqual(strictEgressPolicy());
    expect(egressPolicyFromEnv({}, "development")).toMatchObject({ allowCidrs: [], allowPorts: [443] });
    expect(strictEgressPolicy()).toMatchObject({ allowCidrs: [], allowPorts: [443] });
    expect(strictEgressPolicy().extraCa).toBeUndefined();
  });

  test("the dev override adds CIDRs, ports and a CA to the strict policy", () => {
    const file = caFile();
    const policy = egressPolicyFromEnv(
      {
        PATCHBAY_EGRESS_ALLOW_CIDRS: "127.0.0.0/8, ::1/128",
        PATCHBAY_EGRESS_ALLOW_PORTS: "8443,9443",
        PATCHBAY_EGRESS_CA_FILE: file,
      },
      "test",
    );
    expect(policy.allowCidrs).toEqual(["127.0.0.0/8", "::1/128"]);
    expect(policy.allowPorts).toEqual([443, 8443, 9443]);
    expect(policy.extraCa).toContain("BEGIN CERTIFICATE");
    expect(policy.maxResponseBytes).toBe(strictEgressPolicy().maxResponseBytes);
  });

  test.each([
    ["PATCHBAY_EGRESS_ALLOW_CIDRS", "127.0.0.0/8"],
    ["PATCHBAY_EGRESS_ALLOW_PORTS", "8443"],
    ["PATCHBAY_EGRESS_CA_FILE", "/etc/ca.pem"],
  ])("%s is refused when NODE_ENV=production, naming the variable", (name, value) => {
    expect(() => egressPolicyFromEnv({ [name]: value }, "production")).toThrow(name);
  });

  test.each([
    [{ PATCHBAY_EGRESS_ALLOW_CIDRS: "127.0.0.1" }, "PATCHBAY_EGRESS_ALLOW_CIDRS"],
    [{ PATCHBAY_EGRESS_ALLOW_CIDRS: "localhost/8" }, "PATCHBAY_EGRESS_ALLOW_CIDRS"],
    [{ PATCHBAY_EGRESS_ALLOW_PORTS: "0" }, "PATCHBAY_EGRESS_ALLOW_PORTS"],
    [{ PATCHBAY_EGRESS_ALLOW_PORTS: "70000" }, "PATCHBAY_EGRESS_ALLOW_PORTS"],
    [{ PATCHBAY_EGRESS_ALLOW_PORTS: "8443x" }, "PATCHBAY_EGRESS_ALLOW_PORTS"],
    [{ PATCHBAY_EGRESS_CA_FILE: "/nonexistent/ca.pem" }, "PATCHBAY_EGRESS_CA_FILE"],
  ])("a malformed override %o is an error naming %s", (env, name) => {
    expect(() => egressPolicyFromEnv(env, "development")).toThrow(name);
  });
});
