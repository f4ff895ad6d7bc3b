import { AppError } from "../../errors.ts";
import type { VerificationRun } from "../../platform/db/schema/remediations.ts";
import type { RunResult } from "../../platform/sandbox/sandbox.ts";
import { checkRelativePath } from "../../platform/sandbox/workspace-paths.ts";

/**
 * How a repository's test runner is asked for one file or one test name, and how it reports a
 * failure. Recognised from the registered test command (and, for `npm test` and the like, the
 * `test` script of package.json): the agent needs both to write a reproducing test, and the run
 * needs the first to check it on the default branch.
 */
export type TestRunner = {
  name: string;
  /** How this runner reports a failure, told to the agent. */
  failureFormat: string;
  /** The command running only `files` (and only tests named like `testName`, when given). */
  target(files: string[], testName?: string): string;
};

/** Time and CPU caps for one test run of the agent (and of a reproduction check). */
export const AGENT_TEST_LIMITS = { timeoutMs: 3 * 60 * 1000, cpuSeconds: 3 * 60 };

/** The last characters of output the agent sees, and the relevant lines kept per run. */
export const OUTPUT_TAIL_CHARS = 4_000;
const RELEVANT_MAX_LINES = 60;
const RELEVANT_MAX_CHARS = 4_000;

/** A value as one shell word (`sh -c` runs the command). */
const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** An npm-style wrapper forwards extra arguments after `--`. */
const WRAPPED = /^(npm|pnpm|yarn)( run)? test\b/;

/**
 * The runner behind `testCommand`. `packageScript` is package.json's `scripts.test`, read by the
 * caller when the command goes through npm/pnpm/yarn. Unrecognised runners get the file paths
 * appended, and no name filter.
 */
export function detectTestRunner(testCommand: string, packageScript?: string): TestRunner {
  const command = testCommand.trim();
  const wrapped = WRAPPED.test(command);
  const underlying = wrapped && packageScript ? packageScript : command;
  const extra = (args: string[]) =>
    wrapped ? `${command} -- ${args.join(" ")}` : `${command} ${args.join(" ")}`;
  const files = (list: string[]) => list.map((f) => shellQuote(checkRelativePath(f)));
  if (/\bnode\b.*--test\b/.test(underlying)) {
    return {
      name: "node:test",
      failureFormat:
        "node:test exits 1 when a test fails; each failure is a `not ok N - <test name>` (TAP) or `✖ <test name>` line followed by the error (`error:`, `code:`, `stack:` with `at` frames).",
      target: (list, testName) =>
        extra([
          ...(testName ? [`--test-name-pattern=${shellQuote(escapeRegExp(testName))}`] : []),
          ...files(list),
        ]),
    };
  }
  if (/\bvitest\b/.test(underlying)) {
    return {
      name: "vitest",
      failureFormat:
        "vitest exits 1 when a test fails; each failure is a `FAIL <file> > <test name>` block with the error, `AssertionError`/`Error` message and the source frame (`❯ file:line`).",
      target: (list, testName) => extra([...files(list), ...(testName ? ["-t", shellQuote(testName)] : [])]),
    };
  }
  if (/\bjest\b/.test(underlying)) {
    return {
      name: "jest",
      failureFormat:
        "jest exits 1 when a test fails; each failure is a `● <suite> › <test name>` block with the error message and the `at` frames.",
      target: (list, testName) => extra([...files(list), ...(testName ? ["-t", shellQuote(testName)] : [])]),
    };
  }
  if (/\bmocha\b/.test(underlying)) {
    return {
      name: "mocha",
      failureFormat:
        "mocha exits with the number of failing tests; failures are listed as `N) <suite> <test name>:` with the error and `at` frames.",
      target: (list, testName) =>
        extra([...files(list), ...(testName ? ["--grep", shellQuote(escapeRegExp(testName))] : [])]),
    };
  }
  if (/\bpytest\b/.test(underlying)) {
    return {
      name: "pytest",
      failureFormat:
        "pytest exits 1 when a test fails; each failure has a `____ <test name> ____` section ending in `E   <ExceptionType>: <message>` lines, and `FAILED <file>::<test> - <message>` in the summary.",
      target: (list, testName) => extra([...files(list), ...(testName ? ["-k", shellQuote(testName)] : [])]),
    };
  }
  if (/^go test\b/.test(underlying)) {
    return {
      name: "go test",
      failureFormat:
        "go test exits 1 when a test fails; each failure is `--- FAIL: <TestName>` with the `file_test.go:line:` messages, and panics print `panic:` with a goroutine stack.",
      target: (list, testName) => {
        const dirs = [
          ...new Set(list.map((f) => `./${checkRelativePath(f).replace(/\/?[^/]+$/, "") || "."}`)),
        ];
        return `go test ${dirs.map(shellQuote).join(" ")}${testName ? ` -run ${shellQuote(escapeRegExp(testName))}` : ""}`;
      },
    };
  }
  return {
    name: "unknown",
    failureFormat:
      "A non-zero exit code means the tests failed; read the output for the failing test and its error.",
    target: (list, testName) => {
      if (testName) {
        throw new AppError(
          "invalid_request",
          `patchbay does not know how to select a test by name with \`${command}\`; run the file instead.`,
        );
      }
      return extra(files(list));
    },
  };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Lines that say what failed: failure markers, errors, assertions and the first frames. */
const RELEVANT =
  /(not ok\b|✖|✗|×|\bFAIL(ED)?\b|--- FAIL|\bError\b|Error:|Exception|assert|expected|actual|Received|panic:|^\s*E\s{2,}|^\s+at\s|❯|# (pass|fail|tests)\b|^\s*ℹ (tests|pass|fail)\b)/i;

/** The lines of a run's output that matter for a failure, bounded; the tail when none match. */
export function relevantLines(output: string): string {
  const lines = output.split("\n");
  const picked = lines.filter((l) => RELEVANT.test(l)).slice(0, RELEVANT_MAX_LINES);
  const text = picked.length > 0 ? picked.join("\n") : output.slice(-RELEVANT_MAX_CHARS);
  return text.length > RELEVANT_MAX_CHARS ? `${text.slice(0, RELEVANT_MAX_CHARS - 1)}…` : text;
}

/** One test run as a run's verification records it: what ran, how it ended, its failure lines. */
export const recordRun = (command: string, result: RunResult): VerificationRun => ({
  command,
  exitCode: result.exitCode,
  timedOut: result.timedOut,
  durationMs: result.durationMs,
  output: relevantLines(result.outputTail),
});

/** What a problem looks like, to recognise it in a test's output. */
export type ProblemSignature = {
  exceptionType?: string | undefined;
  message?: string | undefined;
  culprit?: string | undefined;
};

/**
 * Whether a failing run's output shows the problem: its message (digits may differ: messages are
 * grouped with numbers masked), or its exception type together with the culprit's function, or
 * the culprit frame itself (function and file). Returns what matched, or undefined.
 */
export function matchProblem(output: string, problem: ProblemSignature): string | undefined {
  const text = output.replace(/\s+/g, " ");
  const message = problem.message?.trim();
  if (message && message.length >= 4) {
    const pattern = message
      .replace(/\s+/g, " ")
      .split(/\d+/)
      .map((part) => escapeRegExp(part))
      .join("\\d+");
    if (new RegExp(pattern, "i").test(text)) return `the problem's message "${message}"`;
  }
  const culprit = parseCulprit(problem.culprit);
  if (culprit?.fn && culprit.file) {
    const frame = new RegExp(`\\b${escapeRegExp(culprit.fn)}\\b[^\\n]*${escapeRegExp(culprit.file)}`);
    if (frame.test(output)) return `the culprit frame ${culprit.fn} (${culprit.file})`;
  }
  const type = problem.exceptionType?.trim();
  if (type && culprit?.fn && type !== "Error" && text.includes(type) && text.includes(culprit.fn)) {
    return `the exception ${type} in ${culprit.fn}`;
  }
  return undefined;
}

/** `findOrder (src/orders.js)`, `src/orders.js in findOrder`, `findOrder` → function and file. */
function parseCulprit(culprit: string | undefined): { fn?: string; file?: string } | undefined {
  if (!culprit) return undefined;
  const paren = /^\s*([\w$.<>]+)\s*\(([^)]+)\)\s*$/.exec(culprit);
  if (paren) return { fn: paren[1]?.split(".").at(-1), file: paren[2]?.replace(/:\d+(:\d+)?$/, "") };
  const inForm = /^\s*(\S+)\s+in\s+([\w$.<>]+)\s*$/.exec(culprit);
  if (inForm) return { fn: inForm[2]?.split(".").at(-1), file: inForm[1] };
  return { fn: culprit.trim().split(/[\s.]/).at(-1) };
}
