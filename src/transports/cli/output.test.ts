import { Readable } from "node:stream";
import { describe, expect, test } from "vitest";
import { exitCodeFor, nextStepFor } from "./cli-error.ts";
import { colorEnabled, keyValue, stripAnsi, styleFor, table, truncate, visibleLength } from "./format.ts";
import { readSecretFromStdin, stripOneNewline } from "./terminal.ts";

const tty = { isTTY: true, write: () => true };
const pipe = { isTTY: false, write: () => true };

describe("output helpers", () => {
  test("table pads columns to the widest cell, ignoring colour escapes", () => {
    const green = styleFor(tty, {}).green;
    const out = table(
      ["ID", "STATE", "NOTE"],
      [
        ["a", green("ready"), "x"],
        ["long-id", "disabled", ""],
      ],
    );
    const lines = out.trimEnd().split("\n").map(stripAnsi);
    expect(lines).toEqual(["ID       STATE     NOTE", "a        ready     x", "long-id  disabled"]);
    expect(visibleLength(green("ready"))).toBe(5);
  });

  test("keyValue aligns keys and indents continuation lines", () => {
    expect(
      keyValue([
        ["ID", "mcp_1"],
        ["Next step", "Enable it.\npatchbay …"],
      ]),
    ).toBe("ID         mcp_1\nNext step  Enable it.\n           patchbay …\n");
    expect(truncate("one\ntwo", 10)).toBe("one…");
    expect(truncate("abcdefghijkl", 6)).toBe("abcde…");
  });

  test("colour only on a terminal, never with NO_COLOR or TERM=dumb", () => {
    expect(colorEnabled(tty, {})).toBe(true);
    expect(colorEnabled(pipe, {})).toBe(false);
    expect(colorEnabled(tty, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled(tty, { TERM: "dumb" })).toBe(false);
    expect(styleFor(tty, { NO_COLOR: "1" }).red("x")).toBe("x");
  });

  test("a piped secret loses exactly one trailing newline", async () => {
    expect(stripOneNewline("tok\n\n")).toBe("tok\n");
    expect(stripOneNewline("tok\r\n")).toBe("tok");
    expect(await readSecretFromStdin("credential", Readable.from([Buffer.from("a b\n")]))).toBe("a b");
    await expect(readSecretFromStdin("credential", Readable.from([Buffer.from("\n")]))).rejects.toMatchObject(
      {
        exitCode: 2,
      },
    );
  });
});

describe("API problems → exit codes and next steps", () => {
  test.each([
    [401, "unauthorized", 3],
    [403, "forbidden", 3],
    [404, "not_found", 4],
    [409, "connection_enabled", 5],
    [412, "revision_conflict", 5],
    [428, "precondition_required", 5],
    [422, "idempotency_key_reused", 5],
    [422, "remote_auth_failed", 6],
    [502, "remote_unreachable", 6],
    [504, "remote_timeout", 6],
    [400, "invalid_request", 1],
    [422, "invalid_endpoint_url", 1],
    [500, "internal", 1],
  ])("%i %s → %i", (status, code, exit) => {
    expect(exitCodeFor({ status, code })).toBe(exit);
  });

  test("revision_conflict names the read command and the current revision", () => {
    const hint = nextStepFor(
      { status: 412, code: "revision_conflict", currentRevision: 7 },
      { environmentId: "e", connectionId: "mcp_1" },
    );
    expect(hint).toBe(
      "read it again (patchbay environment mcp get mcp_1 --environment e) and retry with --revision 7",
    );
  });
});
