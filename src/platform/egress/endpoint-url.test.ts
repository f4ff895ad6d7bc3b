import { describe, expect, test } from "vitest";
import { AppError } from "../../errors.ts";
import { strictEgressPolicy } from "./address-policy.ts";
import { validateEndpointUrl } from "./endpoint-url.ts";

const dev = { ...strictEgressPolicy(), allowCidrs: ["127.0.0.0/8", "::1/128"], allowPorts: [443, 8443] };

const ruleOf = (raw: string, policy = strictEgressPolicy()): string | undefined => {
  try {
    validateEndpointUrl(raw, policy);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    expect(error.code).toBe("invalid_endpoint_url");
    expect(error.status).toBe(422);
    return String(error.details?.rule);
  }
};

describe("validateEndpointUrl: canonical form", () => {
  test.each([
    ["https://MCP.Example.COM/mcp", "https://mcp.example.com", "https://mcp.example.com/mcp"],
    ["HTTPS://mcp.example.com:443/mcp", "https://mcp.example.com", "https://mcp.example.com/mcp"],
    ["https://mcp.example.com:0443/mcp", "https://mcp.example.com", "https://mcp.example.com/mcp"],
    ["https://mcp.example.com./mcp", "https://mcp.example.com", "https://mcp.example.com/mcp"],
    ["https://mcp.example.com", "https://mcp.example.com", "https://mcp.example.com/"],
    [
      "https://bücher.example.com/v1",
      "https://xn--bcher-kva.example.com",
      "https://xn--bcher-kva.example.com/v1",
    ],
    ["https://ＭＣＰ.example.com/", "https://mcp.example.com", "https://mcp.example.com/"],
    ["https://example.com/a/../b/./c", "https://example.com", "https://example.com/b/c"],
    ["https://8.8.8.8/mcp", "https://8.8.8.8", "https://8.8.8.8/mcp"],
    [
      "https://[2606:4700:4700:0::1111]/mcp",
      "https://[2606:4700:4700::1111]",
      "https://[2606:4700:4700::1111]/mcp",
    ],
  ])("%s → origin %s, canonical %s", (raw, origin, canonical) => {
    const result = validateEndpointUrl(raw);
    expect(result.origin).toBe(origin);
    expect(result.canonical).toBe(canonical);
    expect(result.url.href).toBe(canonical);
  });

  test("the limit is 2048 characters, inclusive", () => {
    const base = "https://mcp.example.com/";
    expect(validateEndpointUrl(base + "a".repeat(2048 - base.length)).canonical).toHaveLength(2048);
    expect(ruleOf(base + "a".repeat(2049 - base.length))).toBe("too_long");
  });

  test("messages never echo the URL's credentials", () => {
    try {
      validateEndpointUrl("https://admin:hunter2@mcp.example.com/");
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect(String(error)).not.toContain("hunter2");
      return;
    }
    throw new Error("expected a refusal");
  });
});

describe("validateEndpointUrl: the dev override", () => {
  test("admits loopback literals on an allowed port", () => {
    expect(validateEndpointUrl("https://127.0.0.1:8443/mcp", dev)).toMatchObject({
      origin: "https://127.0.0.1:8443",
      canonical: "https://127.0.0.1:8443/mcp",
    });
    expect(validateEndpointUrl("https://[::1]:8443/mcp", dev).origin).toBe("https://[::1]:8443");
  });

  test("the same URLs are refused by the strict policy", () => {
    expect(ruleOf("https://127.0.0.1:8443/mcp")).toBe("port");
    expect(ruleOf("https://127.0.0.1/mcp")).toBe("host_ip_not_global");
  });

  test.each([
    ["http://127.0.0.1:8443/mcp", "scheme"],
    ["https://u:p@127.0.0.1:8443/mcp", "userinfo"],
    ["https://127.0.0.1:8443/mcp?", "query"],
    ["https://127.0.0.1:8443/mcp#", "fragment"],
    ["https://localhost:8443/mcp", "host_local_name"],
    ["https://127.0.0.1:9443/mcp", "port"],
    ["https://10.0.0.1:8443/mcp", "host_ip_not_global"],
  ])("never relaxes the other rules: %s → %s", (raw, rule) => {
    expect(ruleOf(raw, dev)).toBe(rule);
  });
});
