import type { ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";

/**
 * Who belongs to an organisation, and with which role, is the owners' decision alone: an admin
 * who could invite or promote could make themselves an owner.
 */
export function requireOwner(ctx: ServiceContext): void {
  if (ctx.actor.role !== "owner") {
    throw new AppError("forbidden", "Only an owner of this organisation may manage its members.", {
      role: ctx.actor.role,
    });
  }
}
