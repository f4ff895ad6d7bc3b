import { fileURLToPath } from "node:url";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { FIXED, lastOutput } from "../../lib/remediation.ts";
import { call, type Turn } from "../../lib/scripted-model.ts";
import { type ServerEnv, type SpawnedServer, spawnServer } from "../../lib/spawn-server.ts";

/**
 * The remediation fault scenario's instances: `patchbay serve` as `remediation-child.ts` builds
 * it (the service's own start-up, HTTP app and remediation worker) with a scripted model, fixture
 * evidence whose log search can be held, and job timings short enough to watch an abandoned step
 * come back. Each instance reports what it does on stdout, one `FAULTS {json}` line per event.
 */

const child = fileURLToPath(new URL("./remediation-child.ts", import.meta.url));

/** The agent's tool calls, in order: one per model turn. */
export const SCRIPT_TOOLS = [
  "get_problem",
  "get_trace",
  "read_file",
  "write_file",
  "search_logs",
  "run_tests",
  "finish",
] as const;

/** The tool call that never returns on the first instance to make it: the kill lands there. */
export const HELD_TOOL = "search_logs";
export const HELD_TURN = SCRIPT_TOOLS.indexOf(HELD_TOOL);

/**
 * The model's turns. The fix is written before the held call, so the takeover has a committed
 * write to replay onto its fresh working copy and must not ask for it again; the test run after
 * the held call shows the replayed file is there.
 */
export function remediationScript(): ((options: LanguageModelV3CallOptions) => Turn)[] {
  const turns: Record<(typeof SCRIPT_TOOLS)[number], (o: LanguageModelV3CallOptions) => Turn> = {
    get_problem: () => call("get_problem"),
    get_trace: (o) => {
      const out = lastOutput(o) as { problem?: { sampleTraceIds?: string[] } };
      return call("get_trace", { traceId: out.problem?.sampleTraceIds?.[0] ?? "missing" });
    },
    read_file: () => call("read_file", { path: "src/order-id.js" }),
    write_file: () => call("write_file", { path: "src/order-id.js", content: FIXED }),
    search_logs: () => call("search_logs", { query: "ORD-000123" }),
    run_tests: () => call("run_tests"),
    finish: (o) => {
      if (lastOutput(o).exitCode !== 0) throw new Error("the fix should pass the repository's tests");
      return call("finish", { summary: "parseOrderId now slices the whole ORD- prefix." });
    },
  };
  return SCRIPT_TOOLS.map((tool) => turns[tool]);
}

/** What an instance reports: a model turn asked, an evidence tool run, the hold taken, a job started. */
export type FaultEvent =
  | { event: "turn"; turn: number; pid: number; at: number }
  | { event: "evidence"; tool: "get_trace" | "search_logs"; pid: number; at: number }
  | { event: "held"; tool: string; pid: number; at: number }
  | { event: "job"; stepSeq: number; pid: number; at: number };

const PREFIX = "FAULTS ";

export function reportFaultEvent(event: Record<string, unknown> & { event: FaultEvent["event"] }): void {
  process.stdout.write(`${PREFIX}${JSON.stringify({ ...event, pid: process.pid, at: Date.now() })}\n`);
}

/** The events an instance reported so far, in order. */
export function faultEvents(server: SpawnedServer): FaultEvent[] {
  return server
    .output()
    .split("\n")
    .filter((line) => line.startsWith(PREFIX))
    .map((line) => JSON.parse(line.slice(PREFIX.length)) as FaultEvent);
}

export type RemediationInstanceOptions = {
  /** patchbay's own configuration (DATABASE_URL, PATCHBAY_KEK, PATCHBAY_DATA_DIR, …). */
  env: ServerEnv;
  /** The environment whose fixture problem the evidence serves. */
  environmentId: string;
  /** Shared by the instances: whichever creates it first holds its `HELD_TOOL` call for good. */
  holdFile: string;
  /** The remediation queue's `expireInSeconds` (the service's own is 65 minutes). */
  jobExpirySeconds: number;
};

export function spawnRemediationInstance(opts: RemediationInstanceOptions): Promise<SpawnedServer> {
  return spawnServer({
    args: [child],
    env: {
      ...opts.env,
      FAULTS_ENVIRONMENT_ID: opts.environmentId,
      FAULTS_HOLD_FILE: opts.holdFile,
      FAULTS_JOB_EXPIRY_SECONDS: String(opts.jobExpirySeconds),
    },
  });
}
