import type { ResourceName } from "./oauth-resources.ts";
import { type Permission, permissions } from "./permissions.ts";
import type { Role } from "./platform/db/schema/users.ts";

/** The principal of paid calls: the verified payer on its network (DESIGN §4). */
export type Wallet = { address: string; network: string };

/**
 * Who is calling, resolved once by the transport. Every actor speaks for one organisation and
 * carries the permissions it has there; verbs authorise on those alone. Audit rows name the
 * type and id.
 * - A member: an API key (`id` is the key's id), a person signed in to the web UI (`id` is the
 *   web session's id, the role read live from the membership) or an OAuth access token (`id` is
 *   its grant's binding, `oag_…`).
 * - A paying wallet on /x402 (`id` is its lowercase address), acting for its wallet-backed
 *   organisation; `environmentId` is that organisation's first environment, the default of
 *   every environment-scoped agent call. The same wallet signed in (SIWX) on the free reads
 *   carries only `signedInWalletPermissions`.
 * - An onboarding session's token on the free polling routes (`id` is the session's id).
 * - The system: a job acting for the organisation whose row it works on (`id` names the job).
 */
export type Actor = MemberActor | WalletActor | SessionActor | SystemActor;

type Grant = { id: string; organizationId: string; permissions: ReadonlySet<Permission> };

export type MemberActor = Grant & {
  type: "api_key" | "web_session" | "oauth_token";
  userId: string;
  role: Role;
  /** OAuth tokens only: the resource (audience) they were issued for and their scopes. */
  oauth?: { resource: ResourceName; scopes: readonly string[]; clientId: string } | undefined;
};

export type WalletActor = Grant & { type: "wallet"; wallet: Wallet; environmentId: string };

/** A verified payer whose wallet has no organisation yet: only signing up takes it. */
export type Payer = { type: "wallet"; id: string; wallet: Wallet };

export type SessionActor = Grant & { type: "onboarding_session"; expired: boolean };

/**
 * Who may use the free /x402 reads: an onboarding session's token, or the organisation's wallet
 * signed in with x402's `sign-in-with-x` (with `signedInWalletPermissions`).
 */
export type FreeReader = SessionActor | WalletActor;

export type SystemActor = Grant & { type: "system" };

/**
 * What a paying wallet may do in its own organisation: the agent flow's reads, starting and
 * following remediations, and connecting a repository for instrumentation (spec 1B).
 */
export const walletPermissions: ReadonlySet<Permission> = new Set<Permission>([
  "environments:read",
  "telemetry:read",
  "remediations:read",
  "remediations:manage",
  "repositories:read",
]);

/**
 * A paying wallet signed in with x402's `sign-in-with-x` on the free reads: it follows its
 * organisation's runs and onboarding sessions, and nothing that costs money.
 */
export const signedInWalletPermissions: ReadonlySet<Permission> = new Set<Permission>(["remediations:read"]);

/** A live session token follows the organisation's runs; an expired one only its own state. */
export const sessionPermissions = (expired: boolean): ReadonlySet<Permission> =>
  new Set<Permission>(expired ? [] : ["remediations:read"]);

export const systemActor = (job: string, organizationId: string): SystemActor => ({
  type: "system",
  id: job,
  organizationId,
  permissions: new Set(permissions),
});

/** Who a row records as having asked: a person's user id, or `wallet:network:address`. */
export function requester(actor: Actor): string {
  switch (actor.type) {
    case "wallet":
      return `wallet:${actor.wallet.network}:${actor.wallet.address}`;
    case "onboarding_session":
    case "system":
      return `${actor.type}:${actor.id}`;
    default:
      return actor.userId;
  }
}
