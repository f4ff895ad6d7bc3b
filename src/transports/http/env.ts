import type { ServiceContext } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import type { VerifiedPayment } from "../x402/verified-payment.ts";

/** Hono variables set by the middleware chain; handlers read `ctx`, paid ones also `paymentOf(c)`. */
export type AppEnv = {
  Variables: {
    deps: Deps;
    requestId: string;
    ctx: ServiceContext;
    /** Paid /x402 routes: set by the payment gate once the payment is verified and claimed. */
    payment?: VerifiedPayment;
  };
};
