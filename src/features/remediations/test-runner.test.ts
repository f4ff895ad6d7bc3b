import { describe, expect, test } from "vitest";
import { detectTestRunner, matchProblem, relevantLines } from "./test-runner.ts";

describe("the repository's test runner", () => {
  test.each([
    ["node --test", undefined, "node --test --test-name-pattern='a\\.b' 'test/x.test.js'"],
    ["npm test", "node --test", "npm test -- --test-name-pattern='a\\.b' 'test/x.test.js'"],
    ["npx vitest run", undefined, "npx vitest run 'test/x.test.js' -t 'a.b'"],
    ["npm run test", "jest --ci", "npm run test -- 'test/x.test.js' -t 'a.b'"],
    ["python -m pytest -q", undefined, "python -m pytest -q 'test/x.test.js' -k 'a.b'"],
    ["go test ./...", undefined, "go test './test' -run 'a\\.b'"],
  ])("%s (script %s) selects one file and one name", (command, script, expected) => {
    expect(detectTestRunner(command, script).target(["test/x.test.js"], "a.b")).toBe(expected);
  });

  test("arguments are one shell word each, and paths are checked like the file tools' paths", () => {
    const runner = detectTestRunner("node --test");
    expect(runner.target(["t/it's.test.js"], "x'; rm -rf / #")).toBe(
      "node --test --test-name-pattern='x'\\''; rm -rf / #' 't/it'\\''s.test.js'",
    );
    expect(() => runner.target(["../outside.test.js"])).toThrow(/must not contain/);
    expect(() => runner.target(["/etc/passwd"])).toThrow(/relative/);
  });

  test("an unknown runner runs files but refuses a name, saying so", () => {
    const runner = detectTestRunner("make check");
    expect(runner.name).toBe("unknown");
    expect(runner.target(["t/a.sh"])).toBe("make check 't/a.sh'");
    expect(() => runner.target([], "a")).toThrow(/run the file instead/);
  });

  test("a failure matches the problem by message (digits may differ), culprit frame, or exception with culprit", () => {
    const problem = {
      exceptionType: "Error",
      message: "order -123 not found",
      culprit: "findOrder (src/orders.js)",
    };
    expect(matchProblem("  error: 'order -456 not found'", problem)).toContain("message");
    expect(matchProblem("    at findOrder (file:///w/src/orders.js:8:23)", problem)).toContain(
      "culprit frame",
    );
    expect(
      matchProblem("TypeError: x is undefined\n    at findOrder (other.js:1:1)", {
        exceptionType: "TypeError",
        culprit: "findOrder (src/orders.js)",
      }),
    ).toContain("exception TypeError");
    expect(matchProblem("AssertionError: 1 !== 2\n    at test (t.js:1:1)", problem)).toBeUndefined();
  });

  test("the relevant lines of a failure, bounded", () => {
    const out = ["TAP version 13", "# Subtest: a", "not ok 1 - a", "  error: 'boom'", "ok 2 - b"].join("\n");
    expect(relevantLines(out)).toBe("not ok 1 - a\n  error: 'boom'");
    expect(relevantLines(`${"not ok x\n".repeat(500)}`).split("\n")).toHaveLength(60);
  });
});
