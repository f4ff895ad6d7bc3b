import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, test } from "../../../test/fixtures.ts";

describe("logging", () => {
  test("requests are logged without Authorization, keys or bodies", async ({ app, owner, logs }) => {
    const made = await owner.api.post("/api-keys", { name: "logged", permissions: ["environments:read"] });
    const { secret } = (await made.json()) as { secret: string };
    await app.request("/api/v1/me", { headers: { authorization: `Bearer ${secret}` } });
    await app.request("/api/v1/me", { headers: { authorization: "Bearer sk_wrongwrongwrong" } });
    await owner.api.post("/environments", { name: "logged-env" });
    const text = logs.text();
    expect(text).toContain('"path":"/api/v1/me"');
    expect(text).toContain('"status":401');
    for (const needle of [owner.apiKey, secret, "sk_wrongwrongwrong", "Bearer", "logged-env"]) {
      expect(text).not.toContain(needle);
    }
  });

  test("the redaction list censors secrets a verb might log by mistake", async ({ deps, logs }) => {
    deps.logger.warn(
      { headers: { authorization: "Bearer sk_leak1" }, credential: "c-leak2", nested: { token: "t-leak3" } },
      "oops",
    );
    const text = logs.text();
    expect(text).toContain("oops");
    for (const needle of ["sk_leak1", "c-leak2", "t-leak3"]) expect(text).not.toContain(needle);
  });
  test("a failed query is logged with its text but without the values it was bound to", async ({
    deps,
    logs,
  }) => {
    const failed = new DrizzleQueryError(
      'insert into "oauth_models" ("payload") values ($1)',
      // A value may hold newlines, even one that looks like a stack frame.
      [{ client_secret: "cs-leak4" }, "multi\n    at line,leak5", "tail-leak6"],
      new Error("invalid byte sequence"),
    );
    deps.logger.error({ err: failed }, "first");
    deps.logger.error({ error: new Error("wrapped", { cause: failed }) }, "second");
    deps.logger.error(failed, "third");
    deps.logger.error(failed); // no message: pino would copy the error's into `msg`
    deps.logger.warn({ err: new AggregateError([failed], "several") }, "fourth");
    const lines = logs
      .text()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg?: string });
    const ours = lines.slice(-5);
    expect(ours.map((line) => line.msg)).toEqual([
      "first",
      "second",
      "third",
      'Failed query: insert into "oauth_models" ("payload") values ($1)\nparams: [redacted]',
      "fourth",
    ]);
    const text = JSON.stringify(ours);
    expect(text.match(/oauth_models/g)?.length).toBeGreaterThanOrEqual(5);
    expect(text).toContain("invalid byte sequence");
    for (const needle of ["cs-leak4", "leak5", "tail-leak6"]) expect(text).not.toContain(needle);
    expect(failed.params).toHaveLength(3); // the live error is left as it was
  });
});
