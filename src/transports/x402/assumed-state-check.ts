import type { HonoRequest, MiddlewareHandler } from "hono";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { type AssumptionKind, readAssumedState } from "../../features/agent-onboarding/assumed-state.ts";
import type { AppEnv } from "../http/env.ts";

const jsonType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Refuses a call made on a stale suggestion (DESIGN §7) before the payment gate, so nothing is
 * charged: the `x_assumed_state` echoed (header or JSON body) is checked against the state now.
 */
export function assumedStateCheck(
  deps: Deps,
  kinds: Record<string, AssumptionKind>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = c.req.header("x-assumed-state") ?? (await bodyField(c.req));
    if (token === undefined) return next();
    const assumption = readAssumedState(deps.keyring, token, deps.clock());
    const separator = assumption?.subject.indexOf(":") ?? -1;
    const kind = assumption ? kinds[assumption.subject.slice(0, separator)] : undefined;
    if (!assumption || separator < 0 || !kind) {
      throw new AppError(
        "invalid_assumed_state",
        "x_assumed_state is not one this service issued; send the value from a next_actions entry unchanged.",
      );
    }
    const id = assumption.subject.slice(separator + 1);
    const current = await kind.digest(deps, id);
    if (assumption.expired || current !== assumption.digest) {
      throw new AppError(
        "stale_assumed_state",
        assumption.expired
          ? "The suggestion you followed has expired; nothing was charged. Follow the fresh next_actions."
          : "The state this suggestion assumed has changed; nothing was charged. Follow the fresh next_actions.",
        { next_actions: await kind.nextActions(deps, id) },
      );
    }
    await next();
  };
}

/** `x_assumed_state` of a JSON body; the text stays cached for the gate and the handler. */
async function bodyField(req: HonoRequest): Promise<string | undefined> {
  if (req.method !== "POST" || !jsonType.test(req.header("content-type") ?? "")) return undefined;
  try {
    const value = JSON.parse(await req.text()) as { x_assumed_state?: unknown } | null;
    return typeof value?.x_assumed_state === "string" ? value.x_assumed_state : undefined;
  } catch {
    return undefined; // the handler reports a malformed body
  }
}
