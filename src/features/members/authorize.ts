import type { MemberActor } from "../../actor.ts";
import { requireMember, type ServiceContext } from "../../context.ts";
import { AppError } from "../../errors.ts";

/**
 * Who belongs to an organisation, and with which role, is the owners' decision alone: an admin
 * who could invite or promote could make themselves an owner.
 */
export function requireOwner(ctx: ServiceContext): MemberActor {
  const member = requireMember(ctx);
  if (member.role !== "owner") {
    throw new AppError("forbidden", "Only an owner of this organisation may manage its members.", {
      role: member.role,
    });
  }
  return member;
}
