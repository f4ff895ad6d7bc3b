import { describe, expect, test } from "vitest";
import { assessRisk } from "./risk.ts";

const existed = (path: string) => !path.startsWith("new/");
const file = (path: string, content: string | null = "x") => ({ path, content });

describe("high-risk changes", () => {
  test("a small source fix, or a new test, is not high risk", () => {
    expect(assessRisk([file("src/order-id.js"), file("new/order-id.test.js")], "+a\n-b\n", existed)).toEqual({
      high: false,
      reasons: [],
    });
  });

  test.each([
    [file("src/old.js", null), "deletes src/old.js"],
    [file("test/order-id.test.js"), "edits the existing test test/order-id.test.js"],
    [file("src/a.spec.ts"), "edits the existing test src/a.spec.ts"],
    [
      file(".github/workflows/ci.yml"),
      "changes CI or repository automation (.github/): .github/workflows/ci.yml",
    ],
    [file("package-lock.json"), "changes a lockfile (dependencies): package-lock.json"],
    [file("db/migrations/0007.sql"), "changes database migrations: db/migrations/0007.sql"],
    [file("Dockerfile"), "changes infrastructure definitions: Dockerfile"],
    [file(".env.production"), "touches secrets or environment files: .env.production"],
  ])("%o → %s", (changed, reason) => {
    expect(assessRisk([changed], "", existed)).toEqual({ high: true, reasons: [reason] });
  });

  test("size: more than 10 files or 400 changed lines", () => {
    const many = Array.from({ length: 11 }, (_, i) => file(`src/f${i}.js`));
    expect(assessRisk(many, "", existed).reasons).toEqual(["changes 11 files (more than 10)"]);
    const diff = `--- a/x\n+++ b/x\n${"+line\n".repeat(401)}`;
    expect(assessRisk([file("src/x.js")], diff, existed).reasons).toEqual([
      "changes 401 lines (more than 400)",
    ]);
  });
});
