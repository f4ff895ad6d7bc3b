// Every command's --help ends with examples, and a typo gets a "did you mean" (commander's
// showSuggestionAfterError, on by default), for commands, subcommands and options alike.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { helpExamples, leafCommands } from "./help-examples.ts";
import { buildCompleteProgram } from "./main.ts";

const bin = fileURLToPath(new URL("../../../bin/patchbay.js", import.meta.url));

function patchbay(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { PATH: process.env.PATH, HOME: "/nonexistent" } },
      (error, stdout, stderr) =>
        resolve({ code: typeof error?.code === "number" ? error.code : 0, stdout, stderr }),
    );
  });
}

describe("patchbay help", () => {
  test("every command has examples, and only commands that exist are listed", async () => {
    const program = await buildCompleteProgram();
    const paths = leafCommands(program).map(([path]) => path);
    expect(paths.filter((p) => !helpExamples[p])).toEqual([]);
    expect(Object.keys(helpExamples).filter((p) => !paths.includes(p))).toEqual([]);
  });

  test("--help prints the examples, for a nested command and for a lazily loaded one", async () => {
    const mcp = await patchbay(["environment", "mcp", "delete", "--help"]);
    expect(mcp.code).toBe(0);
    expect(mcp.stdout).toMatch(
      /Examples:\n {2}\$ patchbay environment mcp disable mcp_\S+ --environment \$ENV/,
    );
    const admin = await patchbay(["admin", "set-password", "--help"]);
    expect(admin.stdout).toContain("$ printf '%s' \"$PASSWORD\" | patchbay admin set-password");
  });

  test("a mistyped command, subcommand or option is answered with a suggestion (exit 2)", async () => {
    for (const [args, suggestion] of [
      [["enviroment", "list"], "(Did you mean environment?)"],
      [["environment", "mcp", "lst"], "(Did you mean list?)"],
      [["audit", "list", "--actr", "x"], "(Did you mean --actor?)"],
      [["environment", "mcp", "list", "--enviroment", "x"], "(Did you mean --environment?)"],
    ] as const) {
      const run = await patchbay([...args]);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr, args.join(" ")).toContain(suggestion);
    }
  });
});
