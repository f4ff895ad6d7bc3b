import type { Context, Hono } from "hono";
import { AppError, isAppError } from "../../../errors.ts";
import { approveConnectionTools } from "../../../features/connections/approve-connection-tools.ts";
import {
  deleteConnection,
  previewConnectionDeletion,
} from "../../../features/connections/delete-connection.ts";
import { discoverConnectionTools } from "../../../features/connections/discover-connection-tools.ts";
import type { ConnectionRef } from "../../../features/connections/find-connection.ts";
import { getConnection } from "../../../features/connections/read-connections.ts";
import { CredentialBody, UpdateConnectionBody } from "../../../features/connections/schemas.ts";
import { setConnectionCredential } from "../../../features/connections/set-connection-credential.ts";
import { setConnectionEnabled } from "../../../features/connections/set-connection-enabled.ts";
import { updateConnection } from "../../../features/connections/update-connection.ts";
import type { WebEnv } from "../env.ts";
import {
  checkAll,
  fieldError,
  formString,
  formStrings,
  parseWith,
  readForm,
  refusalState,
} from "../forms.ts";
import { formatTime, html } from "../html.ts";
import { confirmPage } from "../layout.ts";
import {
  authFromForm,
  type ConnectionFormValues,
  checkEndpoint,
  connectionCodeFields,
  connectionFieldErrors,
  readConnectionForm,
} from "./connection-form.ts";
import { connectionPage, doneMessage } from "./connection-page.ts";
import { connectionsPath } from "./connection-view.ts";
import { plural } from "./telemetry-view.ts";

const connectionBase = "/orgs/:orgId/environments/:environmentId/connections/:connectionId";

/** Faults of the request itself, shown as whole pages; every other refusal is shown on the connection's page. */
const pageErrors = new Set(["forbidden", "not_found", "internal"]);

/** Refusals that belong to a field of the page: a refused credential marks the credential input. */
const actionFields = {
  ...connectionCodeFields,
  tool_not_approvable: "toolNames",
  unknown_tool: "toolNames",
  remote_auth_failed: "value",
};

type ActionInput = { ref: ConnectionRef; revision: number; form: Record<string, unknown> };

/**
 * One connection action: read the form (with the revision the page was rendered at), call a
 * verb, and on success redirect to the page with a fixed note (post/redirect/get) — or answer
 * with the Response `run` returns (a confirmation page, a redirect elsewhere). A refusal
 * re-renders the page from the current state with the verb's message; a revision conflict says
 * the connection changed since the page was loaded.
 */
async function connectionAction(
  c: Context<WebEnv>,
  run: (input: ActionInput) => Promise<string | Response>,
  opts: { settings?: (form: Record<string, unknown>) => Partial<ConnectionFormValues> } = {},
): Promise<Response> {
  const form = await readForm(c);
  const revision = Number(formString(form, "revision"));
  const ref = {
    environmentId: c.get("environment").current.id,
    connectionId: c.req.param("connectionId") ?? "",
  };
  try {
    if (!Number.isInteger(revision) || revision < 1) {
      throw new AppError("invalid_request", "The form lost its revision; reload the page.");
    }
    const done = await run({ ref, revision, form });
    if (done instanceof Response) return done;
    return c.redirect(
      `${connectionsPath(c.get("org").id, ref.environmentId)}/${ref.connectionId}?done=${done}`,
      303,
    );
  } catch (error) {
    if (!isAppError(error) || pageErrors.has(error.code)) throw error;
    const settings = opts.settings?.(form);
    if (error.code === "revision_conflict")
      return connectionPage(c, { status: 412, settings, conflict: { seen: revision } });
    const refusal = refusalState(error, actionFields);
    return connectionPage(c, { ...refusal, settings, fields: connectionFieldErrors(refusal.fields) });
  }
}

export function registerConnectionActions(web: Hono<WebEnv>): void {
  web.get(connectionBase, (c) => connectionPage(c, { flash: doneMessage(c.req.query("done")) }));

  web.post(`${connectionBase}/credential`, (c) =>
    connectionAction(c, async ({ ref, revision, form }) => {
      const { value } = parseWith(CredentialBody, { value: formString(form, "value") });
      await setConnectionCredential({ ctx: c.get("ctx"), input: { ...ref, revision, value } });
      return "credential_set";
    }),
  );

  web.post(`${connectionBase}/discover`, (c) =>
    connectionAction(c, async ({ ref, revision }) => {
      await discoverConnectionTools({ ctx: c.get("ctx"), input: { ...ref, revision } });
      return "discovered#tools";
    }),
  );

  web.post(`${connectionBase}/approve`, (c) =>
    connectionAction(c, async ({ ref, revision, form }) => {
      const toolNames = formStrings(form, "toolNames");
      if (toolNames.length === 0) throw fieldError("toolNames", "Select at least one tool to approve.");
      const discoveryId = formString(form, "discoveryId");
      // Only the selected tools' attestations: a box left ticked on an unselected tool means nothing.
      const attestReadOnly = formStrings(form, "attestReadOnly").filter((n) => toolNames.includes(n));
      await approveConnectionTools({
        ctx: c.get("ctx"),
        input: { ...ref, revision, discoveryId, toolNames, attestReadOnly },
      });
      return "approved#enablement";
    }),
  );

  web.post(`${connectionBase}/enablement`, (c) =>
    connectionAction(c, async ({ ref, revision, form }) => {
      const enabled = formString(form, "enabled") === "true";
      // Disabling fails the running tasks' next calls to it: a page asks first (the same
      // revision is posted back, so a change in between is still a conflict).
      if (!enabled && formString(form, "confirmed") !== "yes") {
        const conn = await getConnection({ ctx: c.get("ctx"), input: ref });
        const page = `${connectionsPath(c.get("org").id, ref.environmentId)}/${ref.connectionId}`;
        return confirmPage(c, {
          title: `Disable ${conn.displayName}?`,
          section: "connections",
          text: html`<p>New tasks in this environment stop receiving the tools of <strong>${conn.displayName}</strong>
  (<code>${conn.alias}</code>); running tasks fail at their next call to it. Its credential and approval are kept, so
  enabling it again is one step.</p>`,
          action: `${page}/enablement`,
          label: "Confirm disabling",
          button: html`<input type="hidden" name="revision" value="${revision}"><input type="hidden" name="enabled" value="false"><input type="hidden" name="confirmed" value="yes">
      <button type="submit" class="danger">Disable connection</button>`,
          cancel: `${page}#enablement`,
        });
      }
      await setConnectionEnabled({ ctx: c.get("ctx"), input: { ...ref, revision, enabled } });
      return enabled ? "enabled" : "disabled";
    }),
  );

  web.post(`${connectionBase}/update`, (c) =>
    connectionAction(
      c,
      async ({ ref, revision, form }) => {
        const values = readConnectionForm(form);
        const [body] = checkAll(
          [
            () =>
              parseWith(UpdateConnectionBody, {
                displayName: values.displayName,
                ...(values.endpointUrl ? { endpointUrl: values.endpointUrl } : {}),
                auth: authFromForm(values),
              }),
            () => checkEndpoint(c, values.endpointUrl),
          ],
          connectionCodeFields,
        );
        await updateConnection({ ctx: c.get("ctx"), input: { ...ref, revision, ...body } });
        return "updated";
      },
      { settings: readConnectionForm },
    ),
  );

  // Deletion in two steps, as the API has it: the preview lists what would be lost and issues a
  // five-minute, single-use receipt for this revision; the confirmation page posts it back.
  web.post(`${connectionBase}/deletion-preview`, (c) =>
    connectionAction(c, async ({ ref, revision }) => {
      const ctx = c.get("ctx");
      const preview = await previewConnectionDeletion({ ctx, input: { ...ref, revision } });
      const conn = await getConnection({ ctx, input: ref });
      const base = `${connectionsPath(c.get("org").id, ref.environmentId)}/${ref.connectionId}`;
      const { effects } = preview;
      return confirmPage(c, {
        title: `Delete ${conn.displayName}?`,
        section: "connections",
        text: html`<p>Deleting <strong>${conn.displayName}</strong> (<code>${conn.alias}</code>, ${conn.endpointOrigin}) cannot be undone:</p>
  <ul>
    <li>${effects.approvedToolCount > 0 ? `${plural(effects.approvedToolCount, "approved tool is", "approved tools are")} removed with it.` : "It has no approved tools."}</li>
    <li>${effects.credentialDestroyed ? "Its stored credential is destroyed." : "It has no stored credential."}</li>
    <li>${
      effects.runningTasksAffected > 0
        ? `${plural(effects.runningTasksAffected, "running task uses", "running tasks use")} it; their next call to it fails.`
        : "No running task uses it."
    }</li>
  </ul>
  <p class="muted">This confirmation is valid until ${formatTime(preview.expiresAt)}, once, and only while nobody changes the connection.</p>`,
        action: `${base}/delete`,
        label: "Confirm deletion",
        button: html`<input type="hidden" name="revision" value="${revision}"><input type="hidden" name="receipt" value="${preview.receipt}">
      <button type="submit" class="danger">Delete permanently</button>`,
        cancel: base,
      });
    }),
  );

  web.post(`${connectionBase}/delete`, (c) =>
    connectionAction(c, async ({ ref, revision, form }) => {
      const receipt = formString(form, "receipt") || undefined;
      await deleteConnection({ ctx: c.get("ctx"), input: { ...ref, revision, receipt } });
      return c.redirect(`${connectionsPath(c.get("org").id, ref.environmentId)}?done=deleted`, 303);
    }),
  );
}
