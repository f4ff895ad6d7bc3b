import { AppError } from "../../errors.ts";
import type { Logger } from "../logging/logger.ts";
import { localSandbox } from "./local-sandbox.ts";
import { bwrapRunner, bwrapWorks, processRunner } from "./runners.ts";
import type { Sandbox } from "./sandbox.ts";

/** Which isolation runs remediation commands (`PATCHBAY_SANDBOX`). */
export type SandboxMode = "auto" | "bwrap" | "process";

/**
 * The configured sandbox. `auto` takes bubblewrap when it works here and otherwise the process
 * fallback, except in production, where falling back silently would run customer code without
 * isolation: there the sandbox is unavailable until bubblewrap works or `PATCHBAY_SANDBOX=process`
 * says the operator accepts the fallback.
 *
 * Probing bubblewrap runs it once (~25 ms, synchronously). Unless `probeNow`, that happens when
 * the sandbox is first asked for, which a service without a model never does.
 */
export function createSandbox(args: {
  mode: SandboxMode;
  nodeEnv: "development" | "test" | "production";
  logger: Logger;
  /** Whether bubblewrap works here (default: probed once). */
  bwrapAvailable?: boolean;
  /** Choose (and log the choice) now rather than on first use. */
  probeNow?: boolean;
}): Sandbox {
  let chosen: Sandbox | undefined;
  const choice = (): Sandbox => {
    chosen ??= choose(args);
    return chosen;
  };
  if (args.probeNow) choice();
  return {
    get kind() {
      return choice().kind;
    },
    get isolation() {
      return choice().isolation;
    },
    createWorkspace: (source) => choice().createWorkspace(source),
  };
}

function choose(args: Parameters<typeof createSandbox>[0]): Sandbox {
  const { mode } = args;
  if (mode === "process") return localSandbox(processRunner);
  if (args.bwrapAvailable ?? bwrapWorks()) return localSandbox(bwrapRunner);
  const why =
    "bubblewrap (bwrap) is not installed or cannot create namespaces here (e.g. a container without user namespaces)";
  if (mode === "bwrap" || args.nodeEnv === "production") {
    args.logger.warn({ mode }, `remediation sandbox unavailable: ${why}`);
    return unavailableSandbox(
      `${why}. Install bubblewrap, or set PATCHBAY_SANDBOX=process to accept the unisolated fallback.`,
    );
  }
  args.logger.warn(
    `remediation sandbox: ${why}; using the process fallback (no network or filesystem isolation)`,
  );
  return localSandbox(processRunner);
}

export function unavailableSandbox(reason: string): Sandbox {
  return {
    kind: "unavailable",
    isolation: "none: no sandbox is available, so no repository code runs.",
    async createWorkspace() {
      throw new AppError("sandbox_unavailable", reason);
    },
  };
}
