import type { Context, Hono } from "hono";
import { AppError, isAppError } from "../../../errors.ts";
import { inviteMember } from "../../../features/members/invite-member.ts";
import { listInvitations } from "../../../features/members/list-invitations.ts";
import { listMembers } from "../../../features/members/list-members.ts";
import { removeMember } from "../../../features/members/remove-member.ts";
import { revokeInvitation } from "../../../features/members/revoke-invitation.ts";
import { setMemberRole } from "../../../features/members/set-member-role.ts";
import { type Role, roles } from "../../../platform/db/schema/users.ts";
import type { WebEnv } from "../env.ts";
import {
  errorSummary,
  type FormState,
  fieldError,
  formString,
  inputField,
  notice,
  postForm,
  readForm,
  refusalState,
  selectField,
} from "../forms.ts";
import { dataTable, formatTime, type Html, hiddenText, html, join, nothing, when } from "../html.ts";
import { confirmPage, renderPage, roleNames } from "../layout.ts";
import { invitationPath } from "./invitation.ts";

const roleOptions = [
  { value: "member", label: "Member — reads; cannot manage connections or keys" },
  { value: "admin", label: "Admin — manages connections and API keys" },
  { value: "owner", label: "Owner — everything, including members and roles" },
] as const;

const done: Record<string, string> = {
  role_changed: "The role was changed. It applies to their API keys at once.",
  removed: "The member was removed and their API keys for this organisation were revoked.",
  invitation_revoked: "The invitation was withdrawn; its link no longer works.",
};

const isRole = (value: string): value is Role => (roles as readonly string[]).includes(value);

type MembersState = FormState & {
  invited?: { email: string; link: string; expiresAt: string };
  form?: { email: string; role: string };
};

async function membersPage(c: Context<WebEnv>, state: MembersState = {}): Promise<Response> {
  const ctx = c.get("ctx");
  const org = c.get("org");
  const isOwner = org.role === "owner";
  const base = `/orgs/${org.id}`;
  const members = await listMembers({ ctx });
  const invitations = isOwner ? await listInvitations({ ctx }) : [];
  const memberRows = members.map(
    (m) => html`<tr>
    <td>${m.email}${when(m.userId === c.get("webUser")?.userId, () => html` <span class="muted">(you)</span>`)}</td>
    <td>${
      isOwner
        ? postForm(c, {
            action: `${base}/members/${m.userId}/role`,
            body: html`<label class="visually-hidden" for="role-${m.userId}">Role of ${m.email}</label>
          <select id="role-${m.userId}" name="role">${join(
            roles.map(
              (r) =>
                html`<option value="${r}"${r === m.role ? html` selected` : nothing}>${roleNames[r]}</option>`,
            ),
          )}</select> <button type="submit" class="secondary">Set role<span class="visually-hidden"> of ${m.email}</span></button>`,
          })
        : roleNames[m.role]
    }</td>
    <td>${formatTime(m.joinedAt)}</td>
    ${when(isOwner, () => html`<td><a href="${base}/members/${m.userId}/remove">Remove…</a></td>`)}
  </tr>`,
  );
  const invitationRows = invitations.map(
    (i) =>
      html`<tr><td>${i.email}</td><td>${roleNames[i.role]}</td><td>${formatTime(i.expiresAt)}</td><td><a href="${base}/invitations/${i.id}/revoke">Withdraw…<span class="visually-hidden"> the invitation of ${i.email}</span></a></td></tr>`,
  );
  const body: Html = html`
${notice(state.flash)}
${errorSummary(state.error, state.fields)}
${when(
  state.invited,
  () => html`<div class="alert success" role="status">
  <p>Invitation created for <strong>${state.invited?.email}</strong>. Send them this link — it is shown only now,
  works once, and expires ${formatTime(state.invited?.expiresAt ?? "")}:</p>
  <code class="secret" id="invitation-link">${state.invited?.link}</code>
  <div class="actions"><button type="button" class="secondary" data-copy="invitation-link">Copy link</button></div>
</div>`,
)}
${dataTable({
  caption: "Members",
  headers: ["Email", "Role", "Joined", ...(isOwner ? [hiddenText("Actions")] : [])],
  rows: memberRows,
})}
${
  isOwner
    ? html`<h2>Open invitations</h2>
${dataTable({
  headers: ["Email", "Role", "Expires", hiddenText("Actions")],
  rows: invitationRows,
  empty: html`<p class="muted">None.</p>`,
})}
<h2>Invite someone</h2>
<div class="card">
${postForm(c, {
  action: `${base}/members/invite`,
  body: html`${inputField({ name: "email", label: "Email", type: "email", value: state.form?.email ?? "", error: state.fields?.email, required: true, autocomplete: "off" })}
  ${selectField({ name: "role", label: "Role", options: roleOptions, value: state.form?.role ?? "member", error: state.fields?.role })}
  <div class="actions"><button type="submit">Create invitation link</button></div>`,
})}
</div>`
    : html`<p class="muted">Only an owner can invite people, change roles or remove members.</p>`
}`;
  return renderPage(c, { title: "Members", section: "members", status: state.status ?? 200, body });
}

/** Re-renders the page with a verb's refusal as a message (never a 500). */
async function withRefusal(c: Context<WebEnv>, action: () => Promise<Response>, state: MembersState = {}) {
  try {
    return await action();
  } catch (error) {
    if (!isAppError(error) || error.status >= 500) throw error;
    return membersPage(c, { ...state, ...refusalState(error, { already_member: "email" }) });
  }
}

export function registerMemberPages(web: Hono<WebEnv>): void {
  const base = "/orgs/:orgId";

  web.get(`${base}/members`, (c) => membersPage(c, { flash: done[c.req.query("done") ?? ""] }));

  web.post(`${base}/members/invite`, async (c) => {
    const form = await readForm(c);
    const email = formString(form, "email");
    const role = formString(form, "role");
    return withRefusal(
      c,
      async () => {
        if (!isRole(role)) throw fieldError("role", "Choose a role.");
        const { invitation, token } = await inviteMember({ ctx: c.get("ctx"), input: { email, role } });
        const link = `${c.get("deps").config.baseUrl}${invitationPath(token)}`;
        return membersPage(c, {
          status: 201,
          invited: { email: invitation.email, link, expiresAt: invitation.expiresAt },
        });
      },
      { form: { email, role } },
    );
  });

  web.post(`${base}/members/:userId/role`, async (c) => {
    const role = formString(await readForm(c), "role");
    return withRefusal(c, async () => {
      if (!isRole(role)) throw fieldError("role", "Choose a role.");
      await setMemberRole({ ctx: c.get("ctx"), input: { userId: c.req.param("userId"), role } });
      return c.redirect(`/orgs/${c.get("org").id}/members?done=role_changed`, 303);
    });
  });

  web.get(`${base}/members/:userId/remove`, async (c) => {
    const org = c.get("org");
    const userId = c.req.param("userId");
    const member = (await listMembers({ ctx: c.get("ctx") })).find((m) => m.userId === userId);
    if (!member) throw new AppError("not_found", "There is no such member in this organisation.");
    return confirmPage(c, {
      title: `Remove ${member.email}?`,
      section: "members",
      text: html`<p>${member.email} (${roleNames[member.role]}) loses access to ${org.name} at once. Their API keys for this
  organisation are revoked and will not come back if they are invited again.</p>`,
      action: `/orgs/${org.id}/members/${userId}/remove`,
      button: html`<button type="submit" class="danger">Remove ${member.email}</button>`,
      cancel: `/orgs/${org.id}/members`,
    });
  });

  web.post(`${base}/members/:userId/remove`, (c) =>
    withRefusal(c, async () => {
      await removeMember({ ctx: c.get("ctx"), input: { userId: c.req.param("userId") } });
      return c.redirect(`/orgs/${c.get("org").id}/members?done=removed`, 303);
    }),
  );

  web.get(`${base}/invitations/:invitationId/revoke`, async (c) => {
    const org = c.get("org");
    const invitationId = c.req.param("invitationId");
    const invitation = (await listInvitations({ ctx: c.get("ctx") })).find((i) => i.id === invitationId);
    if (!invitation)
      throw new AppError("not_found", "There is no such open invitation in this organisation.");
    return confirmPage(c, {
      title: `Withdraw the invitation of ${invitation.email}?`,
      section: "members",
      text: html`<p>The link sent to ${invitation.email} (${roleNames[invitation.role]}) stops working at once. You can invite
  them again later; they then need the new link.</p>`,
      action: `/orgs/${org.id}/invitations/${invitation.id}/revoke`,
      label: "Confirm withdrawal",
      button: html`<button type="submit" class="danger">Withdraw invitation</button>`,
      cancel: `/orgs/${org.id}/members`,
    });
  });

  web.post(`${base}/invitations/:invitationId/revoke`, (c) =>
    withRefusal(c, async () => {
      await revokeInvitation({ ctx: c.get("ctx"), input: { invitationId: c.req.param("invitationId") } });
      return c.redirect(`/orgs/${c.get("org").id}/members?done=invitation_revoked`, 303);
    }),
  );
}
