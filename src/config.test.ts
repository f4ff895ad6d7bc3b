import { describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

describe("config", () => {
  test("defaults: port 8787, ./.patchbay, embedded PGlite", () => {
    const c = loadConfig({});
    expect(c.port).toBe(8787);
    expect(c.dataDir).toBe("./.patchbay");
    expect(c.database).toEqual({ kind: "pglite", dataDir: "./.patchbay" });
    expect(c.baseUrl).toBe("http://127.0.0.1:8787");
  });

  test("telemetry retention: 7 days unless PATCHBAY_TELEMETRY_RETENTION_DAYS says otherwise", () => {
    expect(loadConfig({}).telemetry.retentionDays).toBe(7);
    expect(loadConfig({ PATCHBAY_TELEMETRY_RETENTION_DAYS: "30" }).telemetry.retentionDays).toBe(30);
  });

  test("trusted proxies: none unless PATCHBAY_TRUSTED_PROXIES lists CIDRs", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(
      loadConfig({ PATCHBAY_TRUSTED_PROXIES: " 10.0.0.0/8, 127.0.0.1/32,fd00::/8 " }).trustedProxies,
    ).toEqual(["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
  });

  test("a postgres:// DATABASE_URL switches to PostgreSQL", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).database).toEqual({
      kind: "postgres",
      url: "postgres://u@h/db",
    });
  });

  test.each([
    [{ PORT: "http" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ PATCHBAY_BASE_URL: "ftp://x" }, "PATCHBAY_BASE_URL"],
    [{ NODE_ENV: "production", PATCHBAY_BASE_URL: "https://p.example" }, "PATCHBAY_KEK"],
    [{ NODE_ENV: "staging" }, "NODE_ENV"],
    [{ PATCHBAY_TELEMETRY_RETENTION_DAYS: "0" }, "PATCHBAY_TELEMETRY_RETENTION_DAYS"],
    [{ PATCHBAY_TELEMETRY_RETENTION_DAYS: "1.5" }, "PATCHBAY_TELEMETRY_RETENTION_DAYS"],
    [{ PATCHBAY_TELEMETRY_RETENTION_DAYS: "abc" }, "PATCHBAY_TELEMETRY_RETENTION_DAYS"],
    [{ PATCHBAY_TELEMETRY_RETENTION_DAYS: "3651" }, "PATCHBAY_TELEMETRY_RETENTION_DAYS"],
    [{ PATCHBAY_TRUSTED_PROXIES: "10.0.0.1" }, "PATCHBAY_TRUSTED_PROXIES"],
    [{ PATCHBAY_TRUSTED_PROXIES: "10.0.0.0/8,proxy.internal" }, "PATCHBAY_TRUSTED_PROXIES"],
    [{ PATCHBAY_TRUSTED_PROXIES: "127.1/8" }, "PATCHBAY_TRUSTED_PROXIES"],
  ])("%j is refused naming %s", (env, variable) => {
    try {
      loadConfig(env);
      expect.fail("should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(variable);
      expect((error as Error).message.startsWith(`${variable}:`)).toBe(true);
    }
  });
});

describe("egress configuration", () => {
  test("development may allow loopback for test servers", () => {
    const c = loadConfig({ PATCHBAY_EGRESS_ALLOW_CIDRS: "127.0.0.0/8", PATCHBAY_EGRESS_ALLOW_PORTS: "8443" });
    expect(c.egress.allowCidrs).toEqual(["127.0.0.0/8"]);
    expect(c.egress.allowPorts).toEqual([443, 8443]);
  });

  test("production refuses the override, naming the variable", () => {
    try {
      loadConfig({
        NODE_ENV: "production",
        PATCHBAY_KEK: "x",
        PATCHBAY_BASE_URL: "https://p.example",
        PATCHBAY_EGRESS_ALLOW_CIDRS: "127.0.0.0/8",
      });
      expect.fail("should have thrown");
    } catch (error) {
      expect((error as ConfigError).variable).toBe("PATCHBAY_EGRESS_ALLOW_CIDRS");
    }
  });

  test("production defaults are the strict policy", () => {
    const c = loadConfig({
      NODE_ENV: "production",
      PATCHBAY_KEK: "x",
      PATCHBAY_BASE_URL: "https://p.example",
    });
    expect(c.egress.allowCidrs).toEqual([]);
    expect(c.egress.allowPorts).toEqual([443]);
    expect(c.egress.extraCa).toBeUndefined();
  });
});
