import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { formatUsd } from "../../platform/payments/prices.ts";

/** A paid call from a wallet without an organisation: refused (so not charged), pointing at signup. */
export function signupRequired(deps: Pick<Deps, "config" | "payments">): AppError {
  return new AppError(
    "signup_required",
    "This wallet has no organisation yet; sign up first. Nothing was charged.",
    {
      next_actions: [
        {
          action: "sign_up",
          method: "POST",
          href: `${deps.config.baseUrl}/x402/signup`,
          price: formatUsd(deps.payments.prices.signup),
          description:
            "Create a wallet-backed organisation with a first environment and a publishable telemetry key.",
          body: {},
        },
      ],
    },
  );
}
