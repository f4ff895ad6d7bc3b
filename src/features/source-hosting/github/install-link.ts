import { eq } from "drizzle-orm";
import {
  requireOwnerOrAdmin,
  requirePermission,
  type ServiceContext,
  withTransaction,
} from "../../../context.ts";
import type { Deps } from "../../../deps.ts";
import { AppError } from "../../../errors.ts";
import { recordAuditAs } from "../../../platform/audit/record-audit.ts";
import { githubInstallations } from "../../../platform/db/schema/repositories.ts";
import type { WebUser } from "../../web-sessions/index.ts";
import { resolveWebActor } from "../../web-sessions/index.ts";
import { githubInstallUrl, readInstallState } from "./install-state.ts";

/**
 * The link an owner or admin opens to install patchbay's GitHub App (installing and choosing
 * repositories happen on GitHub, by a person). Its `state` is signed and names the organisation,
 * so the callback binds the installation to the organisation that asked for it (and records as
 * installer the person whose browser comes back, not the one who asked for the link).
 */
export function createGithubInstallLink(args: { ctx: ServiceContext }): { url: string; expiresAt: string } {
  const { ctx } = args;
  requirePermission(ctx, "repositories:manage");
  requireOwnerOrAdmin(ctx);
  const link = githubInstallUrl(ctx.deps, ctx.actor.organizationId);
  if (!link) throw new AppError("provider_unavailable", "No GitHub App is configured on this service.");
  return link;
}

/** Clock skew allowed between GitHub's `created_at` and our own clock. */
const SKEW_MS = 5 * 60 * 1000;

/**
 * GitHub's callback after a person installed the App and authorised it (the App requests user
 * authorisation on install, so GitHub adds a web-flow `code`). The installation is bound to the
 * organisation named in the signed state only if the GitHub user behind `code` can access it —
 * the `installation_id` in the URL is whatever the caller wrote, and ids are sequential, so
 * without this any organisation's own link could claim another's fresh installation — and only
 * if GitHub says it was created after that link was issued. A binding to another organisation
 * stays.
 */
export async function completeGithubInstallation(args: {
  deps: Deps;
  installationId: number;
  state: string;
  code: string;
  /** The patchbay user signed in in the browser that came back from GitHub. */
  user: WebUser;
}): Promise<{ organizationId: string; installationId: number; account: string }> {
  const { deps } = args;
  const github = deps.remediation.github;
  if (!github) throw new AppError("provider_unavailable", "No GitHub App is configured on this service.");
  const state = readInstallState(deps, args.state);
  if (!state)
    throw new AppError("not_found", "This install link is not valid or has expired; ask for a new one.");
  // The browser that came back must be signed in as an owner or admin of the link's organisation.
  // The code only proves who installed on GitHub: without this, a link handed to someone else (a
  // GitHub admin elsewhere, told to "install patchbay") would bind their installation to the
  // link's organisation behind their back.
  const member = await resolveWebActor(deps.db, args.user, state.o);
  if (!member) {
    throw new AppError(
      "forbidden",
      "This install link belongs to an organisation you do not manage in patchbay. Sign in as one of its owners or administrators, or install through your own organisation's link.",
    );
  }
  requireOwnerOrAdmin({ deps, actor: member.actor, channel: "web", requestId: "github-callback" });
  // Before anything is read or bound, and after the state: a forged link never spends a code.
  const installation = await github.installationOfUser({
    code: args.code,
    installationId: args.installationId,
  });
  if (!installation) {
    throw new AppError(
      "forbidden",
      `The GitHub user who authorised this callback cannot access installation ${args.installationId}; install the App through your organisation's own link, signed in as a GitHub user of that account.`,
    );
  }
  const [bound] = await deps.db
    .select()
    .from(githubInstallations)
    .where(eq(githubInstallations.installationId, args.installationId));
  if (bound) {
    if (bound.organizationId !== state.o) {
      throw new AppError("conflict", "This installation is linked to another organisation.");
    }
    return {
      organizationId: bound.organizationId,
      installationId: bound.installationId,
      account: bound.account,
    };
  }
  if (Date.parse(installation.createdAt) < state.iat - SKEW_MS) {
    throw new AppError(
      "conflict",
      "This installation existed before the install link was issued; install through a fresh link from your organisation.",
    );
  }
  await withTransaction(deps.db, async (tx) => {
    await tx.insert(githubInstallations).values({
      installationId: args.installationId,
      organizationId: state.o,
      account: installation.account,
      installedBy: args.user.userId,
      createdAt: deps.clock(),
    });
    await recordAuditAs(tx, {
      organizationId: state.o,
      actor: { type: "user", userId: args.user.userId },
      channel: "web",
      action: "github_installation.linked",
      targetType: "github_installation",
      targetId: String(args.installationId),
      requestId: "github-callback",
      details: { account: installation.account },
    });
  });
  return { organizationId: state.o, installationId: args.installationId, account: installation.account };
}
