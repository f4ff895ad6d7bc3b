import type { Hono } from "hono";
import {
  deleteConnection,
  previewConnectionDeletion,
} from "../../../features/connections/delete-connection.ts";
import { getConnection } from "../../../features/connections/read-connections.ts";
import type { WebEnv } from "../env.ts";
import { formString } from "../forms.ts";
import { formatTime, html } from "../html.ts";
import { confirmPage } from "../layout.ts";
import { connectionAction, connectionBase } from "./connection-actions.ts";
import { connectionsPath } from "./connection-view.ts";
import { plural } from "./telemetry-view.ts";

/**
 * Deletion in two steps, as the API has it: the preview lists what would be lost and issues a
 * five-minute, single-use receipt for this revision; the confirmation page posts it back.
 */
export function registerConnectionDeletePages(web: Hono<WebEnv>): void {
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
